package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mediagen/mediagen-go/webhook"
)

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
		evs, next, err := h.x.Since(context.Background(), cursor)
		if err != nil {
			h.onError(fmt.Errorf("hub: reading shared events: %w", err))
		} else {
			cursor = next
			for _, ev := range evs {
				h.remember(ev)
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
