package poll

import (
	"context"
	"fmt"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/telemetry"
)

// WithSaveTo saves each done generation's outputs into dir before the wait
// returns, as [client.Client.SaveOutput] does (the journal records it given
// an idempotency key); a failed save ends the wait with a [*SaveError].
func WithSaveTo(dir string) Option {
	return option(dir != "", "poll.WithSaveTo: needs a folder", func(s *settings) { s.saveDir = dir })
}

// WithSaveFunc writes each done generation's outputs to the writers open
// returns, as [client.Client.SaveOutputFunc] does; a failed save ends the
// wait with a [*SaveError].
func WithSaveFunc(open client.OpenFunc) Option {
	return option(open != nil, "poll.WithSaveFunc: needs a non-nil function", func(s *settings) {
		s.saveFunc = open
	})
}

// SaveError is the failure to save a done generation's outputs; the wait
// still returns the generation.
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
// failure or its save's.
func (s *settings) finish(ctx context.Context, c *client.Client, g *mediagen.Generation) (err error) {
	job := telemetry.Lookup(g.ID)
	defer func() { job.Finish(string(g.Status), g.Status.Failed(), "") }()
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

// failure returns the error of a terminal generation: nil when done.
func failure(g *mediagen.Generation) error {
	if g.Status.Failed() {
		return &FailedError{Generation: g}
	}
	return nil
}
