package client

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediagen/mediagen-go"
)

// maxSearchPages only stops a search of a list that never reaches its time
// bound (a cursor that cycles): a search reads as deep as the rows
// requested since its attempt began, however fast they were created.
// A variable so a test can lower it.
var maxSearchPages = 10_000

// A search looks for the rows of one feature and arguments requested since
// a bound. After a crash many keys are taken over at once, each searching
// the same newest rows of its feature; one listing serves every search of a
// feature that waits for it, so their cost is that of the deepest one, not
// the sum.

// scans runs the listings searches share, one feature at a time.
type scans struct {
	mu      sync.Mutex
	waiting map[mediagen.Feature][]*scanWaiter // for the next listing of the feature
}

// scanWaiter is one search waiting for a listing.
type scanWaiter struct {
	ctx  context.Context
	want map[string]any
	key  string // want's canonical JSON, to find a row's waiters
	win  searchWindow
	done chan struct{}

	rows  []*mediagen.Generation // matches newest first, then oldest first once done
	bound time.Time
	err   error
}

// findGenerations lists the project's generations of feature newest first
// and returns those whose params equal want and that were requested inside
// win, oldest first, with the bound used. Searches of a call whose requests
// are the client's own (no per-call middleware, header or clock) share the
// listing of any other such search of the feature waiting at that moment.
func (c *Client) findGenerations(ctx context.Context, cfg *config, feature mediagen.Feature, want map[string]any, win searchWindow) ([]*mediagen.Generation, time.Time, error) {
	key, err := json.Marshal(want)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("mediagen: search: %w", err)
	}
	w := &scanWaiter{ctx: ctx, want: want, key: string(key), win: win, done: make(chan struct{})}
	if !c.sharesListing(cfg) {
		c.listFor(ctx, cfg, feature, []*scanWaiter{w})
		return w.rows, w.bound, w.err
	}
	c.scans.mu.Lock()
	first := len(c.scans.waiting[feature]) == 0
	if c.scans.waiting == nil {
		c.scans.waiting = map[mediagen.Feature][]*scanWaiter{}
	}
	c.scans.waiting[feature] = append(c.scans.waiting[feature], w)
	c.scans.mu.Unlock()
	if first {
		go c.runListings(feature)
	}
	select {
	case <-w.done:
		return w.rows, w.bound, w.err
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	}
}

// sharesListing reports whether a call's list requests would be the
// client's own, so that a listing sent for another call serves it.
func (c *Client) sharesListing(cfg *config) bool {
	b := c.search
	if cfg == b {
		return true
	}
	return cfg.s.responseInto == nil && len(cfg.s.middleware) == len(b.s.middleware) &&
		reflect.ValueOf(cfg.s.header).UnsafePointer() == reflect.ValueOf(b.s.header).UnsafePointer() &&
		sameClock(cfg.s.clock, b.s.clock)
}

// sameClock compares two clocks without panicking on an incomparable one.
func sameClock(a, b Clock) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}

// runListings serves the waiters of feature, a listing per group of them,
// until none waits. Only one runs per feature: a waiter that arrives while
// a listing is under way waits for the next, which starts after it came.
func (c *Client) runListings(feature mediagen.Feature) {
	for {
		c.scans.mu.Lock()
		ws := c.scans.waiting[feature]
		c.scans.mu.Unlock()
		// The first waiter's arrival started this goroutine; the group is
		// taken only now, so those that came meanwhile share the listing.
		c.listShared(feature, ws)
		c.scans.mu.Lock()
		rest := c.scans.waiting[feature][len(ws):]
		if len(rest) == 0 {
			delete(c.scans.waiting, feature)
			c.scans.mu.Unlock()
			return
		}
		c.scans.waiting[feature] = slices.Clone(rest)
		c.scans.mu.Unlock()
	}
}

// listShared lists for ws on the client's own configuration, until every
// waiter has its answer or has stopped waiting.
func (c *Client) listShared(feature mediagen.Feature, ws []*scanWaiter) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var left atomic.Int32
	left.Store(int32(len(ws)))
	for _, w := range ws {
		stop := context.AfterFunc(w.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	c.listFor(ctx, c.search, feature, ws)
}

// listFor lists the generations of feature newest first until every
// waiter's bound is passed, hands each waiter its matches and closes done.
func (c *Client) listFor(ctx context.Context, cfg *config, feature mediagen.Feature, ws []*scanWaiter) {
	defer func() {
		for _, w := range ws {
			slices.Reverse(w.rows)
			close(w.done)
		}
	}()
	fail := func(err error) {
		for _, w := range ws {
			w.rows, w.bound, w.err = nil, time.Time{}, err
		}
	}
	byKey := map[string][]*scanWaiter{}
	for _, w := range ws {
		byKey[w.key] = append(byKey[w.key], w)
	}
	var deepest time.Time // the oldest bound: where the listing may stop
	p := ListParams{Feature: feature, Limit: maxPageSize}
	for page := 0; ; page++ {
		if page == maxSearchPages {
			fail(fmt.Errorf("mediagen: read %d %s generations without reaching those requested before the attempt began; stopped searching", page*maxPageSize, feature))
			return
		}
		pg, resp, err := c.listGenerations(ctx, cfg, p)
		if err != nil {
			fail(err)
			return
		}
		if page == 0 {
			serverNow, received := serverDate(resp), cfg.call.Clock.Now()
			for i, w := range ws {
				w.bound = w.win.bound(serverNow, received)
				if i == 0 || w.bound.Before(deepest) {
					deepest = w.bound
				}
			}
		}
		older := false
		for _, g := range pg.Generations {
			if g.RequestDate.Before(deepest) {
				older = true
				continue
			}
			// The feature as spelled: the row must echo what the call sent.
			if g.Feature != feature {
				continue
			}
			b, err := json.Marshal(map[string]any(g.Params))
			if err != nil {
				continue
			}
			for _, w := range byKey[string(b)] {
				// Params was decoded from JSON as want was, so equal JSON
				// is equal values; DeepEqual confirms it.
				if !g.RequestDate.Before(w.bound) && reflect.DeepEqual(map[string]any(g.Params), w.want) {
					w.rows = append(w.rows, g)
				}
			}
		}
		if older || pg.NextCursor == "" {
			break
		}
		p.Cursor = pg.NextCursor
	}
	cfg.call.Logger.DebugContext(ctx, "mediagen: searched generations", slog.String("feature", string(feature)),
		slog.Int("searches", len(ws)), slog.Time("since", deepest))
}
