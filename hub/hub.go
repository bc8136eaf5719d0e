// Package hub lets verified webhook events end waits (poll.WithHub), also on
// other replicas, through an [Exchange] such as [SQLExchange].
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
	// DefaultSize is how many terminal events a hub remembers, dropping the oldest.
	DefaultSize = 10000
	// DefaultRetention is how long a hub remembers a terminal event, for a wait that begins after it.
	DefaultRetention = time.Hour
	// DefaultExchangeInterval is how often a hub reads what other replicas shared.
	DefaultExchangeInterval = 100 * time.Millisecond
)

// Hub remembers terminal events and ends the waits on their ids: give its
// Deliver to webhook.Handler, and poll.WithHub to the waits, which then poll
// only as a backstop. A verified event is as good as a GET, and a terminal
// state never changes, so a late or repeated event cannot take a wait back.
// One Hub, safe for concurrent use, serves every wait of a program.
type Hub struct {
	mu       sync.Mutex
	size     int
	keep     time.Duration
	events   map[Key]held
	order    []Key // oldest first, for eviction
	watchers map[Key]map[*watcher]struct{}
	traces   map[string]string // generation id → the trace of a wait on another replica
	traced   []string          // the ids of traces, oldest first
	x        Exchange
	every    time.Duration
	stop     context.CancelFunc // ends the reading of shared events
	done     chan struct{}
	onError  func(error)
}

// Key names what a wait watches: a generation, or a voice clone when Voice is set.
type Key struct {
	ID    string
	Voice bool
}

type held struct {
	ev *webhook.Event
	at time.Time
}

// watcher is one wait's interest in some keys; an event for one ends its context.
type watcher struct{ cancel context.CancelFunc }

// Option configures [New].
type Option func(*Hub) error

// WithSize sets how many terminal events the hub remembers (default
// [DefaultSize]), dropping the oldest; n must be positive.
func WithSize(n int) Option {
	return positive("hub.WithSize", n, func(h *Hub) *int { return &h.size })
}

// WithRetention sets how long the hub remembers a terminal event (default
// [DefaultRetention]); d must be positive.
func WithRetention(d time.Duration) Option {
	return positive("hub.WithRetention", d, func(h *Hub) *time.Duration { return &h.keep })
}

// positive returns an option setting *field to v, refusing v <= 0 in the name of opt.
func positive[S any, T int | time.Duration](opt string, v T, field func(S) *T) func(S) error {
	return func(s S) error {
		if v <= 0 {
			return fmt.Errorf("%s(%v): want a positive value", opt, v)
		}
		*field(s) = v
		return nil
	}
}

// New returns a hub with opts over the defaults; the error joins every
// invalid option. Close it when an [Exchange] was given.
func New(opts ...Option) (*Hub, error) {
	h := &Hub{size: DefaultSize, keep: DefaultRetention, every: DefaultExchangeInterval,
		events: map[Key]held{}, watchers: map[Key]map[*watcher]struct{}{}, traces: map[string]string{},
		onError: func(error) {}}
	if err := errors.Join(apply(h, opts)...); err != nil {
		return nil, err
	}
	if h.x != nil {
		ctx, stop := context.WithCancel(context.Background())
		h.stop, h.done = stop, make(chan struct{})
		go h.exchange(ctx)
	}
	return h, nil
}

// apply runs the non-nil opts on t and returns their errors.
func apply[T any, O ~func(T) error](t T, opts []O) []error {
	var errs []error
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(t); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Deliver, a webhook.Handler callback, remembers a terminal event and ends
// the waits on its id; it ignores others. With an [Exchange] it shares the
// event, and fails when that fails, so the service sends it again.
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

// remember stores a terminal event and wakes its watchers; it reports whether ev was terminal.
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
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.events[k]; !ok {
		h.order = append(h.order, k)
	}
	h.events[k] = held{ev: ev, at: now}
	// Drop the events past the retention or beyond the size, oldest first.
	drop := 0
	for ; drop < len(h.order); drop++ {
		e, ok := h.events[h.order[drop]]
		if ok && len(h.order)-drop <= h.size && now.Sub(e.at) < h.keep {
			break
		}
		delete(h.events, h.order[drop])
	}
	h.order = h.order[drop:] // append copies only the live keys when it grows
	for w := range h.watchers[k] {
		w.cancel()
	}
	return true
}

// Lookup returns the terminal event the hub holds for k.
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
// event for one of keys arrives, and the function that ends the watch. With an
// [Exchange] and tracing on, the first watch of a traced job shares its trace
// context, so the replica its webhook lands on links the delivery to the job.
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

// Exchange shares terminal events between the hubs of replicas: the webhook
// lands on one, the wait may run on another.
type Exchange interface {
	// Publish shares a verified terminal event.
	Publish(ctx context.Context, ev *webhook.Event) error
	// Since returns the events shared after cursor (0 for the start), and
	// the cursor to ask from next time.
	Since(ctx context.Context, cursor int64) ([]*webhook.Event, int64, error)
}

// WithExchange makes the hub share the terminal events it is given through x,
// and read those of others every interval (0: [DefaultExchangeInterval]).
// Read errors go to onError, if not nil, and are retried at the next interval.
// Close the hub when done.
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

// exchange reads what other replicas shared until Close.
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

// Close stops the reading of shared events; Deliver still works. It may be called twice.
func (h *Hub) Close() error {
	if h.stop != nil {
		h.stop()
		<-h.done
	}
	return nil
}
