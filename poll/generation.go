package poll

import (
	"context"
	"errors"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
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
	if s.hub != nil {
		return generationWithHub(ctx, c, s, id)
	}
	dl := newDeadline(s)
	var last *mediagen.Generation
	for n := 1; ; n++ {
		g, err := c.GetGeneration(ctx, id, s.clientOpts...)
		if err != nil {
			if errors.Is(err, client.ErrNotFound) && ctx.Err() == nil {
				return last, &GoneError{ID: id, Seen: last != nil, Err: err}
			}
			return last, giveUp(ctx, id, last, err)
		}
		s.observe(last, g)
		last = g
		if g.Terminal() {
			return g, s.finish(ctx, c, g)
		}
		if err := dl.sleep(ctx, s.intervalFor(scheduleFor(g.Kind), n)); err != nil {
			return last, giveUp(ctx, id, last, err)
		}
	}
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
