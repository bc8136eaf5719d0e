package batch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/mediagen/mediagen-go/client"
)

// maxRateLimited is how many 429s end an item.
const maxRateLimited = 10

// submit creates items [0, n) in order, within the window, and returns
// when none is in flight.
func (r *run) submit(ctx context.Context, n int) {
	r.queue = make([]int, n)
	for i := range r.queue {
		r.queue[i] = i
	}
	var wg sync.WaitGroup
	for {
		i, ok := r.next(ctx)
		if !ok {
			break
		}
		epoch, err := r.win.acquire(ctx)
		if err != nil {
			r.putBack(i)
			break
		}
		wg.Go(func() { r.create(ctx, i, epoch) })
	}
	wg.Wait()
	r.mu.Lock()
	left := r.queue
	r.queue = nil
	r.mu.Unlock()
	for _, i := range left {
		r.skip(i, fmt.Errorf("batch: not sent: %w", ctx.Err()))
	}
}

// next takes the next item to send and reserves its estimate. While creates
// are in flight it waits for one to end (a 429 puts an item back, a charge
// may come in under its estimate); with none, an item that does not fit
// ends over the budget. false: nothing left, or the context ended.
func (r *run) next(ctx context.Context) (int, bool) {
	for {
		if ctx.Err() != nil {
			return 0, false
		}
		wake, inFlight := r.win.changed()
		r.mu.Lock()
		if len(r.queue) > 0 {
			i := r.queue[0]
			if r.ledger.reserve(r.ests[i]) {
				r.queue = r.queue[1:]
				r.mu.Unlock()
				return i, true
			}
			if inFlight == 0 {
				r.queue = r.queue[1:]
				r.mu.Unlock()
				r.skip(i, fmt.Errorf("%w: not sent: its estimate of %s does not fit in what the budget of %s has left", ErrOverBudget, r.ests[i], r.s.budget))
				continue
			}
		} else if inFlight == 0 {
			r.mu.Unlock()
			return 0, false
		}
		r.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
		}
	}
}

// putBack returns item i, reserved but not sent, to the queue's front.
func (r *run) putBack(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ledger.reserved -= r.ests[i]
	r.queue = slices.Insert(r.queue, 0, i)
}

// create sends item i, in the window's slot of epoch.
func (r *run) create(ctx context.Context, i int, epoch int) {
	it := r.items[i]
	opts := append(slices.Clip(r.s.clientOpts), client.WithIdempotencyKey(it.Key))
	g, err := r.c.CreateGeneration(ctx, it.Args, opts...)
	// The ledger changes before the window, whose change wakes next.
	if err == nil {
		r.created(i, g)
		r.win.done(epoch, success, 0)
		return
	}
	if tl := tooLong(err, r.s.maxPause); tl != nil {
		// Nothing was charged, and the item ends; the window backs off.
		r.mu.Lock()
		r.ledger.reserved -= r.ests[i]
		r.mu.Unlock()
		r.win.done(epoch, rateLimited, 0)
		r.finish(i, nil, tl, "")
		return
	}
	if errors.Is(err, client.ErrRateLimited) {
		// Nothing was charged: the item may go again.
		r.mu.Lock()
		r.ledger.reserved -= r.ests[i]
		r.tries[i]++
		again := r.tries[i] < maxRateLimited && ctx.Err() == nil
		if again {
			r.queue = append(r.queue, i)
		}
		r.mu.Unlock()
		r.win.done(epoch, rateLimited, retryAfter(err))
		if !again {
			r.finish(i, nil, fmt.Errorf("batch: rate limited %d times: %w", maxRateLimited, err), "")
		}
		return
	}
	// Nothing was charged, except in these two cases: keep the estimate.
	var uncertain *client.UncertainError
	switch {
	case ctx.Err() != nil:
		err = fmt.Errorf("batch: the run stopped with the create in flight, which may have been charged; "+
			"the journal holds its key, and a run with it searches before sending: %w", err)
	case errors.As(err, &uncertain):
		err = fmt.Errorf("batch: the create may have been charged: %w", err)
	default:
		r.mu.Lock()
		r.ledger.reserved -= r.ests[i]
		r.mu.Unlock()
	}
	r.win.done(epoch, neutral, 0)
	r.finish(i, nil, err, "")
}
