package poll

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/retry"
)

// Outputs expire with their generation, 24 hours after its request: a wait
// can save them as soon as the generation is done.

// OpenFunc returns where one output of a done generation goes: name is
// "output" or "poster", mediaType the output's media type. The wait writes
// the bytes and closes the writer; an error from Close fails the save (so
// an upload to blob storage can commit there). It may be called again for
// the same output when a transfer broke midway: start over.
type OpenFunc func(ctx context.Context, g *mediagen.Generation, name, mediaType string) (io.WriteCloser, error)

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
// video's poster, to the writers open returns: to blob storage, a database
// or anywhere else, with the SDK you choose. Transient download failures
// are retried; a failure that lasts ends the wait with the generation and
// a [*SaveError].
func WithSaveFunc(open OpenFunc) Option {
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

func (e *SaveError) Error() string {
	return fmt.Sprintf("poll: saving the outputs of generation %s: %v", e.Generation.ID, e.Err)
}

func (e *SaveError) Unwrap() error { return e.Err }

// maxSaveStarts bounds how often one output is started over after a
// transfer broke midway.
const maxSaveStarts = 3

// finish returns the error a wait ends with on a terminal generation: its
// failure, or the failure to save its outputs.
func (s *settings) finish(ctx context.Context, c *client.Client, g *mediagen.Generation) error {
	if err := failure(g); err != nil {
		return err
	}
	var err error
	switch {
	case s.saveDir != "":
		_, err = c.SaveOutput(ctx, g, s.saveDir, s.clientOpts...)
	case s.saveFunc != nil:
		err = s.saveWith(ctx, c, g)
	default:
		return nil
	}
	if err != nil {
		return &SaveError{Generation: g, Err: err}
	}
	return nil
}

// saveWith writes g's outputs through s.saveFunc.
func (s *settings) saveWith(ctx context.Context, c *client.Client, g *mediagen.Generation) error {
	type output struct{ name, url, mediaType string }
	outs := []output{{"output", g.Output.URL(), g.Output.MIME}}
	if g.Output.Poster != "" {
		outs = append(outs, output{"poster", g.Output.Poster, "image/png"})
	}
	for _, o := range outs {
		if o.url == "" {
			continue // a text output is in the generation itself
		}
		// A transfer that broke after bytes reached the writer starts over
		// with a new one, in the SDK's one retry loop.
		err := retry.Do(ctx, s.clock, retry.Policy{MaxRetries: maxSaveStarts - 1, Patient: true}, func(int) retry.Outcome {
			err := s.saveOne(ctx, c, g, o.name, o.url, o.mediaType)
			var se *client.StorageError
			return retry.Outcome{Err: err, Retry: errors.As(err, &se) && se.Retryable}
		}, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
	}
	return nil
}

func (s *settings) saveOne(ctx context.Context, c *client.Client, g *mediagen.Generation, name, url, mediaType string) error {
	w, err := s.saveFunc(ctx, g, name, mediaType)
	if err != nil {
		return err
	}
	if err := c.Download(ctx, url, w, s.clientOpts...); err != nil {
		_ = w.Close()
		return err
	}
	return w.Close()
}
