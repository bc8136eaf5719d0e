package batch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/retry"
	"github.com/mediagen/mediagen-go/poll"
)

// maxRewaits bounds the waits again after a failing request ended one.
const maxRewaits = 5

// wait waits for every item that has a generation and has not ended,
// saving those that end done.
func (r *run) wait(ctx context.Context) {
	r.mu.Lock()
	var ids []string
	byID := map[string]int{}
	for i, res := range r.res {
		if res.Generation != nil && !r.ended[i] {
			ids = append(ids, res.Generation.ID)
			byID[res.Generation.ID] = i
		}
	}
	r.mu.Unlock()

	var saves sync.WaitGroup
	defer saves.Wait()
	slots := make(chan struct{}, r.s.ceiling)
	// Done generations end, or start saving, as soon as they are seen.
	onUpdate := func(g *mediagen.Generation) {
		i, ok := byID[g.ID]
		if !ok || g.Status != mediagen.GenerationStatusDone {
			return
		}
		if r.s.saveTo == "" {
			r.finish(i, g, nil, "")
			return
		}
		saves.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			r.save(ctx, i, g)
		})
	}
	opts := append([]poll.Option{poll.WithClientOptions(r.s.clientOpts...)}, r.s.pollOpts...)
	opts = append(opts, poll.OnUpdate(onUpdate))
	for round := 0; len(ids) > 0; round++ {
		results, err := poll.Generations(ctx, r.c, ids, opts...)
		if results == nil { // an option poll refuses: nothing was waited on
			for _, id := range ids {
				r.finish(byID[id], nil, err, "")
			}
			return
		}
		var again []*poll.GaveUpError // to wait for again
		var pause time.Duration
		for _, res := range results {
			var gaveUp *poll.GaveUpError
			var saveErr *poll.SaveError
			switch {
			case res.Err == nil: // done: OnUpdate took it
			case errors.As(res.Err, &saveErr): // a save of the poll options'
				r.saveFailed(byID[res.ID], res.Generation, res.Err)
			case errors.As(res.Err, &gaveUp) && tooLong(gaveUp.Err, r.s.maxPause) != nil:
				r.finish(byID[res.ID], res.Generation, tooLong(gaveUp.Err, r.s.maxPause), "")
			case errors.As(res.Err, &gaveUp) && round < maxRewaits && ctx.Err() == nil && retry.Transient(gaveUp.Err):
				again = append(again, gaveUp)
				pause = max(pause, cmp.Or(retryAfter(gaveUp.Err), defaultRetryAfter))
			default:
				r.finish(byID[res.ID], res.Generation, res.Err, "")
			}
		}
		if len(again) == 0 {
			return
		}
		if err := r.win.clock.Sleep(ctx, pause); err != nil {
			for _, g := range again {
				r.finish(byID[g.ID], g.Last, &poll.GaveUpError{ID: g.ID, Status: g.Status, Last: g.Last, Err: err}, "")
			}
			return
		}
		ids = ids[:0]
		for _, g := range again {
			ids = append(ids, g.ID)
		}
	}
}

// save saves item i's done generation with its key, so the journal records it.
func (r *run) save(ctx context.Context, i int, g *mediagen.Generation) {
	opts := append(slices.Clip(r.s.clientOpts), client.WithIdempotencyKey(r.items[i].Key))
	saved, err := r.c.SaveOutput(ctx, g, r.s.saveTo, opts...)
	if err != nil {
		r.finish(i, g, fmt.Errorf("batch: saving the outputs of generation %s: %w", g.ID, err), "")
		return
	}
	r.finish(i, g, nil, saved.Path)
}

// saveFailed ends item i with err, a failed save of the run's poll options,
// even when OnUpdate already ended it done.
func (r *run) saveFailed(i int, g *mediagen.Generation, err error) {
	r.mu.Lock()
	if !r.ended[i] {
		r.mu.Unlock()
		r.finish(i, g, err, "")
		return
	}
	flipped := r.res[i].Err == nil
	if flipped {
		r.res[i].Err = err
		r.counts.Done--
		r.counts.Failed++
	}
	r.mu.Unlock()
	if flipped {
		r.report()
	}
}

// retryAfter is the Retry-After err carries; 0 when it has none.
func retryAfter(err error) time.Duration {
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		return apiErr.RetryAfter
	}
	return 0
}

// tooLong returns, for a failure that asks to wait longer than patience
// ([WithMaxPause]), the error that says so; nil otherwise.
func tooLong(err error, patience time.Duration) error {
	if d := retryAfter(err); d > patience {
		return fmt.Errorf("batch: the service asks to wait %s before trying again, longer than the run waits (%s): %w", d, patience, err)
	}
	return nil
}
