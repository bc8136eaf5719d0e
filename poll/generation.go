package poll

import (
	"context"
	"errors"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/webhook"
)

// Generation waits until the generation id reaches a terminal state and
// returns it. The first check is immediate; later checks follow the schedule
// of the generation's kind (see the package documentation).
//
// Status error or timeout returns the generation with a [*FailedError]; a
// 404 returns a [*GoneError]; a wait that stops early returns the last
// generation seen (or nil) with a [*GaveUpError]. Errors of single checks
// are retried by the client; one that persists ends the wait.
func Generation(ctx context.Context, c *client.Client, id string, opts ...Option) (*mediagen.Generation, error) {
	s, err := newSettings(c, generationWait, opts)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, errors.New("poll: empty generation id")
	}
	return wait(ctx, s, subject[*mediagen.Generation]{
		key: hub.Key{ID: id},
		get: func(ctx context.Context) (*mediagen.Generation, error) {
			return c.GetGeneration(ctx, id, s.clientOpts...)
		},
		fromEvent: func(ev *webhook.Event) *mediagen.Generation { return ev.Generation },
		observe:   s.observe,
		end:       func(ctx context.Context, g *mediagen.Generation) error { return s.finish(ctx, c, g) },
		gaveUp: func(ctx context.Context, last *mediagen.Generation, err error) error {
			return giveUp(ctx, id, last, err)
		},
		interval: func(last *mediagen.Generation, n int) time.Duration {
			return s.intervalFor(scheduleFor(last.Kind), n)
		},
		backstop: firstBackstop(s.kind),
	})
}

// observe calls OnUpdate when g's status is new.
func (s *settings) observe(prev, g *mediagen.Generation) {
	if s.onUpdate != nil && (prev == nil || prev.Status != g.Status) {
		s.onUpdate(g)
	}
}

// failure returns the error of a terminal generation: nil when done.
func failure(g *mediagen.Generation) error {
	switch g.Status {
	case mediagen.GenerationStatusError, mediagen.GenerationStatusTimeout:
		return &FailedError{Generation: g}
	}
	return nil
}
