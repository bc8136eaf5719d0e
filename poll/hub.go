package poll

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/webhook"
)

// Defaults of [NewHub].
const (
	// DefaultHubSize is how many terminal events a hub remembers; when full
	// it drops the oldest.
	DefaultHubSize = 10000
	// DefaultHubRetention is how long a hub remembers a terminal event, for
	// a wait that begins after its event arrived.
	DefaultHubRetention = time.Hour
	// DefaultExchangeInterval is how often a hub reads the events other
	// replicas shared ([WithExchange]).
	DefaultExchangeInterval = 100 * time.Millisecond
)

// Hub lets verified webhook events end waits: give its Deliver to
// webhook.Handler, and [WithHub] to the waits. A wait then returns as soon
// as a terminal event for its id arrives, even one that arrived before the
// wait began, and polls only as a backstop, rarely, for events that were
// lost. A Hub is safe for concurrent use; one serves every wait of a
// program.
//
// The generation a wait returns is then the event's: the service sends in
// an event the same body as a GET of the generation, and the event was
// verified (signature and age) before it reached the hub, so it is as good
// as a read and costs no request. A terminal state never changes, so a late
// or repeated event cannot take a wait back.
type Hub struct {
	mu       sync.Mutex
	size     int
	keep     time.Duration
	events   map[hubKey]*hubEvent
	order    []hubKey // oldest first, for eviction
	watchers map[hubKey]map[*watcher]struct{}
	x        Exchange
	every    time.Duration
	stop     chan struct{}
	done     chan struct{}
	onError  func(error)
}

// hubKey names a generation or a voice.
type hubKey struct {
	voice bool
	id    string
}

// hubEvent is a remembered terminal event.
type hubEvent struct {
	gen   *mediagen.Generation
	voice *mediagen.Voice
	at    time.Time
}

// watcher is one wait's interest in some keys; its channel receives a
// value when an event for one of them arrives.
type watcher struct{ ch chan struct{} }

// HubOption configures [NewHub].
type HubOption func(*Hub) error

// WithHubSize sets how many terminal events the hub remembers (default
// [DefaultHubSize]); when full it drops the oldest. n must be positive.
func WithHubSize(n int) HubOption {
	return func(h *Hub) error {
		if n < 1 {
			return fmt.Errorf("poll: WithHubSize(%d): want at least 1", n)
		}
		h.size = n
		return nil
	}
}

// WithHubRetention sets how long the hub remembers a terminal event
// (default [DefaultHubRetention]); d must be positive.
func WithHubRetention(d time.Duration) HubOption {
	return func(h *Hub) error {
		if d <= 0 {
			return fmt.Errorf("poll: WithHubRetention(%s): want a positive duration", d)
		}
		h.keep = d
		return nil
	}
}

// NewHub returns a hub with opts over the defaults. It panics when an
// option is invalid, as a program cannot run on a hub it did not mean.
// Close it when an [Exchange] was given.
func NewHub(opts ...HubOption) *Hub {
	h := &Hub{size: DefaultHubSize, keep: DefaultHubRetention, every: DefaultExchangeInterval,
		events: map[hubKey]*hubEvent{}, watchers: map[hubKey]map[*watcher]struct{}{}, onError: func(error) {}}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(h); err != nil {
			panic(err)
		}
	}
	if h.x != nil {
		h.stop, h.done = make(chan struct{}), make(chan struct{})
		go h.exchange()
	}
	return h
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
	if h.x != nil {
		if err := h.x.Publish(ctx, ev); err != nil {
			return fmt.Errorf("poll: sharing the event: %w", err)
		}
	}
	return nil
}

// remember stores a terminal event and wakes its watchers; it reports
// whether ev was terminal.
func (h *Hub) remember(ev *webhook.Event) bool {
	var k hubKey
	e := &hubEvent{at: time.Now()}
	switch {
	case ev == nil:
		return false
	case ev.Generation != nil && ev.Generation.Terminal() && ev.Generation.ID != "":
		k, e.gen = hubKey{id: ev.Generation.ID}, ev.Generation
	case ev.Voice != nil && ev.Voice.Status != "" && ev.Voice.Terminal() && ev.Voice.ID != "":
		k, e.voice = hubKey{voice: true, id: ev.Voice.ID}, ev.Voice
	default:
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.events[k]; !ok {
		h.order = append(h.order, k)
	}
	h.events[k] = e
	h.evict(e.at)
	for w := range h.watchers[k] {
		select {
		case w.ch <- struct{}{}:
		default: // already woken
		}
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
		if ok && h.events[h.order[drop]] == e {
			delete(h.events, h.order[drop])
		}
		drop++
	}
	if drop > 0 {
		h.order = append(h.order[:0], h.order[drop:]...)
	}
}

// lookup returns the remembered terminal event of k.
func (h *Hub) lookup(k hubKey) (*hubEvent, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.events[k]
	if ok && time.Since(e.at) >= h.keep {
		return nil, false
	}
	return e, ok
}

// watch returns a channel that receives when an event for one of keys
// arrives, and the function that ends the watch.
func (h *Hub) watch(keys ...hubKey) (<-chan struct{}, func()) {
	w := &watcher{ch: make(chan struct{}, 1)}
	h.mu.Lock()
	for _, k := range keys {
		if h.watchers[k] == nil {
			h.watchers[k] = map[*watcher]struct{}{}
		}
		h.watchers[k][w] = struct{}{}
	}
	h.mu.Unlock()
	return w.ch, func() {
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

// WithHub makes a wait ([Generation], [Generations], [Voice]) end as soon as
// h receives a terminal event for its id, and poll only as a backstop: a
// first check when a render of the kind is normally over ([WithKind]; the
// slowest kind's time without it), then every [BackstopInterval]. Without
// events (all lost) a wait still ends: for renders that take their usual
// time, at most one backstop interval after polling alone would have seen
// it. A render much faster than usual, or one already over when the wait
// begins (a wait resumed after a restart), is seen only at the first
// check: for such a wait, read the generation first ([client.Client.GetGeneration])
// or wait without a hub.
func WithHub(h *Hub) Option {
	return func(s *settings) error {
		if h == nil {
			return errors.New("poll.WithHub: needs a hub")
		}
		s.hub = h
		return nil
	}
}
