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
	return wait(ctx, s, hub.Key{ID: id}, generationSubject{c: c, s: s, id: id})
}

// generationSubject is the [subject] of a wait on a generation.
type generationSubject struct {
	c  *client.Client
	s  *settings
	id string
}

func (w generationSubject) get(ctx context.Context) (*mediagen.Generation, error) {
	return w.c.GetGeneration(ctx, w.id, w.s.clientOpts...)
}

func (w generationSubject) fromEvent(ev *webhook.Event) *mediagen.Generation { return ev.Generation }

func (w generationSubject) observe(last, g *mediagen.Generation) { w.s.observe(last, g) }

func (w generationSubject) end(ctx context.Context, g *mediagen.Generation) error {
	return w.s.finish(ctx, w.c, g)
}

func (w generationSubject) gone(seen bool, err error) error {
	return &GoneError{ID: w.id, Seen: seen, Err: err}
}

func (w generationSubject) gaveUp(ctx context.Context, last *mediagen.Generation, err error) error {
	return giveUp(ctx, w.id, last, err)
}

func (w generationSubject) interval(last *mediagen.Generation, n int) time.Duration {
	return w.s.intervalFor(scheduleFor(last.Kind), n)
}

func (w generationSubject) backstop() time.Duration { return firstBackstop(w.s.kind) }

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
