package poll

import (
	"context"
	"errors"
	"fmt"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/telemetry"
)

// WithSaveTo makes a wait save each done generation's output, and a
// video's poster, into dir, as [client.Client.SaveOutput] does, before it
// returns. Given an idempotency key ([client.WithIdempotencyKey], through
// [WithClientOptions]) the journal records the save. A save that fails
// after the client's retries ends the wait with the generation and a
// [*SaveError].
func WithSaveTo(dir string) Option {
	return func(s *settings) error {
		if dir == "" {
			return errors.New("poll.WithSaveTo: needs a folder")
		}
		s.saveDir = dir
		return nil
	}
}

// WithSaveFunc makes a wait write each done generation's output, and a
// video's poster, to the writers open returns, as
// [client.Client.SaveOutputFunc] does: to blob storage, a database or
// anywhere else, with the SDK you choose. A failure that lasts after the
// client's retries ends the wait with the generation and a [*SaveError].
func WithSaveFunc(open client.OpenFunc) Option {
	return func(s *settings) error {
		if open == nil {
			return errors.New("poll.WithSaveFunc: needs a non-nil function")
		}
		s.saveFunc = open
		return nil
	}
}

// SaveError is the failure to save the outputs of a done generation; the
// wait still returns the generation, whose outputs stay downloadable until
// it expires.
type SaveError struct {
	Generation *mediagen.Generation
	Err        error
}

// Error names the generation and what failed to save.
func (e *SaveError) Error() string {
	return fmt.Sprintf("poll: saving the outputs of generation %s: %v", e.Generation.ID, e.Err)
}

// Unwrap returns Err.
func (e *SaveError) Unwrap() error { return e.Err }

// finish returns the error a wait ends with on a terminal generation: its
// failure, or the failure to save its outputs.
func (s *settings) finish(ctx context.Context, c *client.Client, g *mediagen.Generation) (err error) {
	job := telemetry.Lookup(g.ID) // the generation's job, ended here
	defer func() { job.Finish(string(g.Status), err != nil && g.Status != mediagen.GenerationStatusDone, "") }()
	if err := failure(g); err != nil {
		return err
	}
	ctx = job.Context(ctx)
	switch {
	case s.saveDir != "":
		_, err = c.SaveOutput(ctx, g, s.saveDir, s.clientOpts...)
	case s.saveFunc != nil:
		err = c.SaveOutputFunc(ctx, g, s.saveFunc, s.clientOpts...)
	default:
		return nil
	}
	if err != nil {
		return &SaveError{Generation: g, Err: err}
	}
	return nil
}
