// Package hub lets verified webhook events end waits: a [Hub] remembers the
// terminal events of generations and voice clones, wakes the waits watching
// their ids, and, through an [Exchange] such as [SQLExchange], shares them
// with the hubs of other replicas. Package poll's waits read it
// (poll.WithHub).
package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mediagen/mediagen-go/internal/telemetry"
	"github.com/mediagen/mediagen-go/webhook"
)

// Defaults of [New].
const (
	// DefaultSize is how many terminal events a hub remembers; when full it
	// drops the oldest.
	DefaultSize = 10000
	// DefaultRetention is how long a hub remembers a terminal event, for a
	// wait that begins after its event arrived.
	DefaultRetention = time.Hour
	// DefaultExchangeInterval is how often a hub reads the events other
	// replicas shared ([WithExchange]).
	DefaultExchangeInterval = 100 * time.Millisecond
)

// Hub lets verified webhook events end waits: give its Deliver to
// webhook.Handler, and poll.WithHub to the waits. A wait then returns as
// soon as a terminal event for its id arrives, even one that arrived before
// the wait began, and polls only as a backstop, rarely, for events that
// were lost. A Hub is safe for concurrent use; one serves every wait of a
// program.
//
// The service sends in an event the same body as a GET of the generation,
// and the event was verified (signature and age) before it reached the hub,
// so it is as good as a read and costs no request. A terminal state never
// changes, so a late or repeated event cannot take a wait back.
type Hub struct {
	mu       sync.Mutex
	size     int
	keep     time.Duration
	events   map[Key]held
	order    []Key // oldest first, for eviction
	watchers map[Key]map[*watcher]struct{}
	traces   map[string]string // generation id → the trace of a wait on another replica
	traced   []string          // the ids of traces, oldest first, for eviction
	x        Exchange
	every    time.Duration
	stop     context.CancelFunc // ends the reading of shared events
	done     chan struct{}
	onError  func(error)
}

// Key names what a wait watches: a generation, or a voice clone when Voice
// is set.
type Key struct {
	ID    string
	Voice bool
}

// held is a remembered terminal event.
type held struct {
	ev *webhook.Event
	at time.Time
}

// watcher is one wait's interest in some keys; an event for one of them
// ends its context.
type watcher struct{ cancel context.CancelFunc }

// Option configures [New].
type Option func(*Hub) error

// WithSize sets how many terminal events the hub remembers (default
// [DefaultSize]); when full it drops the oldest. n must be positive.
func WithSize(n int) Option {
	return func(h *Hub) error {
		if n < 1 {
			return fmt.Errorf("hub.WithSize(%d): want at least 1", n)
		}
		h.size = n
		return nil
	}
}

// WithRetention sets how long the hub remembers a terminal event (default
// [DefaultRetention]); d must be positive.
func WithRetention(d time.Duration) Option {
	return func(h *Hub) error {
		if d <= 0 {
			return fmt.Errorf("hub.WithRetention(%s): want a positive duration", d)
		}
		h.keep = d
		return nil
	}
}

// New returns a hub with opts over the defaults; the error joins every
// invalid option. Close it when an [Exchange] was given.
func New(opts ...Option) (*Hub, error) {
	h := &Hub{size: DefaultSize, keep: DefaultRetention, every: DefaultExchangeInterval,
		events: map[Key]held{}, watchers: map[Key]map[*watcher]struct{}{}, traces: map[string]string{},
		onError: func(error) {}}
	var errs []error
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(h); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if h.x != nil {
		ctx, stop := context.WithCancel(context.Background())
		h.stop, h.done = stop, make(chan struct{})
		go h.exchange(ctx)
	}
	return h, nil
}

// Deliver takes a verified webhook event: a terminal one is remembered and
// ends the waits on its id; others (an event this SDK does not know) are
// ignored. Its signature is webhook.Handler's callback's. It does not block
// on waits; with an [Exchange] it also shares the event, and fails when that
// fails, so the service sends it again.
func (h *Hub) Deliver(ctx context.Context, ev *webhook.Event) error {
	if !h.remember(ev) {
		return nil
	}
	id := "" // a voice's
	if ev.Generation != nil {
		id = ev.Generation.ID
	}
	h.mu.Lock()
	remote := h.traces[id]
	h.mu.Unlock()
	tp := telemetry.Delivered(ctx, id, remote)
	if h.x != nil {
		if err := h.x.Publish(ctx, withTrace(ev, tp)); err != nil {
			return fmt.Errorf("hub: sharing the event: %w", err)
		}
	}
	return nil
}

// remember stores a terminal event and wakes its watchers; it reports
// whether ev was terminal.
func (h *Hub) remember(ev *webhook.Event) bool {
	var k Key
	switch {
	case ev == nil:
		return false
	case ev.Generation != nil && ev.Generation.Terminal() && ev.Generation.ID != "":
		k = Key{ID: ev.Generation.ID}
	case ev.Voice != nil && ev.Voice.Status != "" && ev.Voice.Terminal() && ev.Voice.ID != "":
		k = Key{ID: ev.Voice.ID, Voice: true}
	default:
		return false
	}
	e := held{ev: ev, at: time.Now()}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.events[k]; !ok {
		h.order = append(h.order, k)
	}
	h.events[k] = e
	h.evict(e.at)
	for w := range h.watchers[k] {
		w.cancel()
	}
	return true
}

// evict drops events past the retention or beyond the size, oldest first.
// The caller holds h.mu.
func (h *Hub) evict(now time.Time) {
	drop := 0
	for drop < len(h.order) {
		e, ok := h.events[h.order[drop]]
		if ok && len(h.order)-drop <= h.size && now.Sub(e.at) < h.keep {
			break
		}
		delete(h.events, h.order[drop])
		drop++
	}
	if drop > 0 {
		h.order = h.order[drop:] // append copies only the live keys when it grows
	}
}

// Lookup returns the terminal event the hub holds for k: its Generation is
// set for a generation's key, its Voice for a voice's.
func (h *Hub) Lookup(k Key) (*webhook.Event, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.events[k]
	if !ok || time.Since(e.at) >= h.keep {
		return nil, false
	}
	return e.ev, true
}

// Watch returns a context derived from ctx that also ends when a terminal
// event for one of keys arrives, so a wait's sleep on it ends at once, and
// the function that ends the watch; call it when done. The hub ends the
// context itself: no goroutine waits for the event.
//
// With an [Exchange] and tracing on, the first watch of a generation whose
// job this process traces also shares the job's trace context, one row,
// so that the replica its webhook lands on links the delivery to the job.
func (h *Hub) Watch(ctx context.Context, keys ...Key) (context.Context, context.CancelFunc) {
	if h.x != nil {
		h.shareTraces(ctx, keys)
	}
	wctx, cancel := context.WithCancel(ctx)
	w := &watcher{cancel: cancel}
	h.mu.Lock()
	for _, k := range keys {
		if h.watchers[k] == nil {
			h.watchers[k] = map[*watcher]struct{}{}
		}
		h.watchers[k][w] = struct{}{}
	}
	h.mu.Unlock()
	return wctx, func() {
		cancel()
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, k := range keys {
			delete(h.watchers[k], w)
			if len(h.watchers[k]) == 0 {
				delete(h.watchers, k)
			}
		}
	}
}

// Exchange shares terminal events between the hubs of several replicas: the
// webhook lands on one replica, the wait may run on another. [SQLExchange]
// keeps them in a table of a shared database.
type Exchange interface {
	// Publish shares a verified terminal event.
	Publish(ctx context.Context, ev *webhook.Event) error
	// Since returns the events shared after cursor (0 for the start), and
	// the cursor to ask from next time.
	Since(ctx context.Context, cursor int64) ([]*webhook.Event, int64, error)
}

// WithExchange makes the hub share the terminal events it is given through
// x, and read those others shared every interval (0 for
// [DefaultExchangeInterval]). Errors reading x go to onError, when not
// nil; the hub tries again at the next interval. Close the hub when done.
func WithExchange(x Exchange, interval time.Duration, onError func(error)) Option {
	return func(h *Hub) error {
		if x == nil {
			return errors.New("hub.WithExchange: nil exchange")
		}
		if interval < 0 {
			return fmt.Errorf("hub.WithExchange: negative interval %s", interval)
		}
		if interval > 0 {
			h.every = interval
		}
		h.x = x
		if onError != nil {
			h.onError = onError
		}
		return nil
	}
}

// exchange reads what other replicas shared until Close, starting from the
// events shared in the last retention period.
func (h *Hub) exchange(ctx context.Context) {
	defer close(h.done)
	var cursor int64
	t := time.NewTicker(h.every)
	defer t.Stop()
	for {
		evs, next, err := h.x.Since(ctx, cursor) // Close cuts off a read that hangs
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			h.onError(fmt.Errorf("hub: reading shared events: %w", err))
		default:
			cursor = next
			for _, ev := range evs {
				tp, raw := splitTrace(ev.Raw)
				if ev.Name == watchEvent {
					h.noteTrace(ev, tp)
					continue
				}
				if tp != "" { // a copy: an Exchange may hand the same event to other hubs
					e := *ev
					e.Raw = raw
					ev = &e
				}
				if h.remember(ev) && ev.Generation != nil {
					telemetry.Exchanged(ev.Generation.ID, tp)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Close stops the hub's reading of shared events; the hub still takes
// events given to Deliver. It is safe to call more than once.
func (h *Hub) Close() error {
	if h.stop != nil {
		h.stop()
		<-h.done
	}
	return nil
}
