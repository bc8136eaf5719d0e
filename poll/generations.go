package poll

import (
	"context"
	"errors"
	"slices"

	"github.com/mediagen/mediagen-go/client"
)

// pageSize is the largest page the list endpoint serves.
const pageSize = 100

// Generations waits until every generation in ids reaches a terminal state,
// reading them through the list endpoint: each round reads pages of 100,
// newest first, only until every id still waited on has been seen, so
// waiting on 100 recent generations costs one request per round instead of
// 100. Ids the pages read do not show (one left, ids deep in the list, ids
// expired or deleted) are checked with one GET each, which is cheaper than
// reading on. Rounds follow the schedule of the fastest kind still waited on;
// [WithInterval], [WithMaxWait] and [OnUpdate] (called per generation) apply.
//
// The result has one entry per id, in the order of ids (duplicates share
// one): the terminal generation, or the last one seen, or nil. The error
// joins one error per id that did not end done, each carrying its id: a
// [*FailedError], [*GoneError] or [*GaveUpError]. A request that fails
// after the client's retries ends the wait on every id not yet terminal.
func Generations(ctx context.Context, c *client.Client, ids []string, opts ...Option) ([]*client.Generation, error) {
	s, err := newSettings(c, opts)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if id == "" {
			return nil, errors.New("poll: empty generation id")
		}
	}
	b := &batch{c: c, s: s, last: map[string]*client.Generation{}, errs: map[string]error{}, waiting: map[string]bool{}}
	for _, id := range ids {
		b.waiting[id] = true
	}
	b.run(ctx)

	results := make([]*client.Generation, len(ids))
	var errs []error
	reported := map[string]bool{}
	for i, id := range ids {
		results[i] = b.last[id]
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
	last    map[string]*client.Generation
	errs    map[string]error
}

func (b *batch) run(ctx context.Context) {
	dl := newDeadline(b.s)
	for n := 0; len(b.waiting) > 0; n++ {
		if n > 0 {
			if err := dl.sleep(ctx, b.s.intervalFor(b.schedule(), n)); err != nil {
				b.giveUpAll(ctx, err)
				return
			}
		}
		seen, err := b.scan(ctx)
		if err != nil {
			b.giveUpAll(ctx, err)
			return
		}
		var missing []string
		for id := range b.waiting {
			if g, ok := seen[id]; ok {
				b.update(id, g)
			} else {
				missing = append(missing, id)
			}
		}
		slices.Sort(missing) // a stable order of GETs and OnUpdate calls
		for _, id := range missing {
			g, err := b.c.GetGeneration(ctx, id)
			switch {
			case err == nil:
				b.update(id, g)
			case errors.Is(err, client.ErrNotFound) && ctx.Err() == nil:
				b.errs[id] = &GoneError{ID: id, Seen: b.last[id] != nil, Err: err}
				delete(b.waiting, id)
			default:
				b.giveUpAll(ctx, err)
				return
			}
		}
	}
}

// scan reads pages until every waited id has been seen, the list ends, or
// reading on would cost more than a GET of each id still unseen: a page is
// read only while more ids are unseen than pages were read, plus one. An id
// many pages deep (an old video behind hundreds of newer images) therefore
// costs one GET a round, not a walk through the whole list, and a round
// never costs much more than one GET per id would. While all waited
// generations share a feature, the list is filtered by it.
func (b *batch) scan(ctx context.Context) (map[string]*client.Generation, error) {
	seen := map[string]*client.Generation{}
	params := client.ListParams{Limit: pageSize, Feature: b.commonFeature()}
	for pages := 0; len(b.waiting)-len(seen) > pages+1; pages++ {
		page, err := b.c.ListGenerations(ctx, params)
		if err != nil {
			return nil, err
		}
		for _, g := range page.Generations {
			if b.waiting[g.Id] {
				seen[g.Id] = g
			}
		}
		if page.NextCursor == "" {
			break
		}
		params.Cursor = page.NextCursor
	}
	return seen, nil
}

// update records g and ends the wait on it when it is terminal.
func (b *batch) update(id string, g *client.Generation) {
	b.s.observe(b.last[id], g)
	b.last[id] = g
	if client.IsTerminal(g.Status) {
		delete(b.waiting, id)
		if err := failure(g); err != nil {
			b.errs[id] = err
		}
	}
}

// giveUpAll ends the wait on every id still waited on.
func (b *batch) giveUpAll(ctx context.Context, err error) {
	for id := range b.waiting {
		b.errs[id] = giveUp(ctx, id, b.last[id], err)
		delete(b.waiting, id)
	}
}

// schedule is the fastest schedule among the kinds still waited on; before
// any is known, the fastest there is.
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
func (b *batch) commonFeature() string {
	feature := ""
	for id := range b.waiting {
		g := b.last[id]
		if g == nil {
			return ""
		}
		switch f := string(g.Feature); {
		case feature == "":
			feature = f
		case f != feature:
			return ""
		}
	}
	return feature
}
