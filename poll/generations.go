package poll

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/internal/telemetry"
)

// pageSize is the largest page the list endpoint serves.
const pageSize = 100

// Result is the outcome of one id of [Generations].
type Result struct {
	ID string
	// Generation is the terminal one, or the last seen; nil when none was.
	Generation *mediagen.Generation
	// Err is nil when it ended done, else as [Generation] would return.
	Err error
}

// Generations waits until every generation in ids is terminal, through the
// list endpoint: waiting on 100 recent generations costs one request a
// round instead of 100, and a round never more than a GET per id plus one
// page. Rounds follow the fastest kind's schedule still waited on.
//
// It returns a result per id, in order; the error joins the results'
// errors. A request that fails after the client's retries ends the wait on
// every id not yet terminal.
func Generations(ctx context.Context, c *client.Client, ids []string, opts ...Option) ([]Result, error) {
	s, err := newSettings(c, generationWait, opts)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if id == "" {
			return nil, errors.New("poll: empty generation id")
		}
	}
	b := &batch{c: c, s: s, last: map[string]*mediagen.Generation{}, errs: map[string]error{}, waiting: map[string]bool{}, tel: map[string]waitSpan{}}
	tel := telemetry.Of(c)
	for _, id := range ids {
		if !b.waiting[id] {
			b.waiting[id] = true
			wctx, w := tel.StartWait(ctx, id)
			b.tel[id] = waitSpan{wctx, w}
		}
	}
	defer func() { // after a panic of OnUpdate or a save's OpenFunc; else all ended
		for _, w := range b.tel {
			w.Close(telemetry.ErrPanicked)
		}
	}()
	b.run(ctx)

	results := make([]Result, len(ids))
	var errs []error
	reported := map[string]bool{}
	for i, id := range ids {
		results[i] = Result{ID: id, Generation: b.last[id], Err: b.errs[id]}
		if err := b.errs[id]; err != nil && !reported[id] {
			reported[id] = true
			errs = append(errs, err)
		}
	}
	return results, errors.Join(errs...)
}

// batch is the state of one Generations call.
type batch struct {
	c       *client.Client
	s       *settings
	waiting map[string]bool
	last    map[string]*mediagen.Generation
	errs    map[string]error
	tel     map[string]waitSpan
}

// waitSpan is one id's wait span and the context its own requests run under.
type waitSpan struct {
	ctx context.Context
	*telemetry.Wait
}

func (b *batch) run(ctx context.Context) {
	keys := make([]hub.Key, 0, len(b.waiting))
	for id := range b.waiting {
		keys = append(keys, hub.Key{ID: id})
	}
	p := newPacer(ctx, b.s, keys...)
	defer func() { p.stop() }() // the last watch
	for n := 0; len(b.waiting) > 0; n++ {
		for id := range b.waiting {
			if ev, ok := p.event(hub.Key{ID: id}); ok {
				b.update(ctx, id, ev.Generation, true)
			}
		}
		if len(b.waiting) == 0 {
			return
		}
		woke, err := p.pause(ctx, n, FirstBackstop(b.s.kind), func() time.Duration { return b.s.intervalFor(b.schedule(), n) })
		switch {
		case woke:
			n--
			continue
		case err != nil:
			b.giveUpAll(ctx, err)
			return
		}
		seen, err := b.scan(ctx, p.opts)
		if err != nil {
			b.giveUpAll(ctx, err)
			return
		}
		var missing []string
		for id := range b.waiting {
			if g, ok := seen[id]; ok {
				b.update(ctx, id, g, false)
			} else {
				missing = append(missing, id)
			}
		}
		slices.Sort(missing) // a stable order of GETs and OnUpdate calls
		for _, id := range missing {
			g, err := b.c.GetGeneration(b.tel[id].ctx, id, p.opts...)
			switch {
			case err == nil:
				b.update(ctx, id, g, false)
			case errors.Is(err, client.ErrNotFound) && ctx.Err() == nil:
				b.errs[id] = &GoneError{ID: id, Seen: b.last[id] != nil, Err: err}
				b.tel[id].Close(err)
				telemetry.Gone(id)
				delete(b.waiting, id)
			default:
				b.giveUpAll(ctx, err)
				return
			}
		}
	}
}

// scan reads the newest page, and another only while the pages after the
// first each showed a waited id: each is paid for by a GET it saves.
func (b *batch) scan(ctx context.Context, opts []client.Option) (map[string]*mediagen.Generation, error) {
	seen := map[string]*mediagen.Generation{}
	params := client.ListParams{Limit: pageSize, Feature: b.commonFeature()}
	for pages := 0; len(seen) < len(b.waiting) && (pages == 0 || len(seen) >= pages); pages++ {
		page, err := b.c.ListGenerations(ctx, params, opts...)
		if err != nil {
			return nil, err
		}
		for _, g := range page.Generations {
			if b.waiting[g.ID] {
				seen[g.ID] = g
			}
		}
		if page.NextCursor == "" {
			break
		}
		params.Cursor = page.NextCursor
	}
	return seen, nil
}

// update records g, read or from an event, and ends its wait when terminal.
func (b *batch) update(ctx context.Context, id string, g *mediagen.Generation, byEvent bool) {
	b.s.observe(b.last[id], g)
	b.last[id] = g
	if !byEvent {
		b.tel[id].Check(g.Terminal())
	}
	if g.Terminal() {
		b.tel[id].End(byEvent)
		delete(b.waiting, id)
		if err := b.s.finish(ctx, b.c, g); err != nil {
			b.errs[id] = err
		}
	}
}

// giveUpAll ends the wait on every id still waited on.
func (b *batch) giveUpAll(ctx context.Context, err error) {
	for id := range b.waiting {
		b.errs[id] = giveUp(ctx, id, b.last[id], err)
		b.tel[id].Close(b.errs[id])
		delete(b.waiting, id)
	}
}

// schedule is the fastest schedule of the kinds waited on, unknown ones fast.
func (b *batch) schedule() schedule {
	best := slowSchedule
	for id := range b.waiting {
		g := b.last[id]
		if g == nil {
			return fastSchedule
		}
		if sc := scheduleFor(g.Kind); sc.first < best.first {
			best = sc
		}
	}
	return best
}

// commonFeature returns the feature every waited generation shares, or "".
func (b *batch) commonFeature() mediagen.Feature {
	var feature mediagen.Feature
	for id := range b.waiting {
		g := b.last[id]
		if g == nil || feature != "" && g.Feature != feature {
			return ""
		}
		feature = g.Feature
	}
	return feature
}
