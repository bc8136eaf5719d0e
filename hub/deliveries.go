package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/telemetry"
	"github.com/mediagen/mediagen-go/webhook"
)

// CountDeliveries returns webhook.Handler options that count in the metric
// mediagen.webhook.deliveries the deliveries refused (mediagen.result
// "refused") and the repeats dropped ("duplicate"); [Hub.Deliver] counts the
// rest. Give the handler's store (nil: a MemoryStore) and error function (nil:
// slog) here: options after these would replace them.
func CountDeliveries(store webhook.Store, onError func(context.Context, *webhook.Event, error)) []webhook.Option {
	if store == nil {
		store = webhook.NewMemoryStore(0)
	}
	if onError == nil {
		onError = logError
	}
	return []webhook.Option{
		webhook.WithStore(countedStore{store}),
		webhook.WithErrorFunc(func(ctx context.Context, ev *webhook.Event, err error) {
			if ev == nil { // the handler refused the delivery
				telemetry.Delivery(ctx, "refused")
			}
			onError(ctx, ev, err)
		}),
	}
}

// countedStore counts the ids its store has seen already: duplicates.
type countedStore struct{ webhook.Store }

func (s countedStore) Claim(ctx context.Context, id string) (bool, error) {
	fresh, err := s.Store.Claim(ctx, id)
	if err == nil && !fresh {
		telemetry.Delivery(ctx, "duplicate")
	}
	return fresh, err
}

func logError(ctx context.Context, ev *webhook.Event, err error) {
	if ev == nil {
		slog.WarnContext(ctx, "webhook: delivery refused", "err", err)
		return
	}
	slog.ErrorContext(ctx, "webhook: delivery failed", "event", string(ev.Name), "err", err)
}

// traceField starts a shared event's Raw, which any Exchange keeps, with the
// trace context of the delivery, for the waiting replica to link its job to.
const traceField = `{"mediagen_traceparent":"`

func withTrace(ev *webhook.Event, tp string) *webhook.Event {
	if tp == "" || len(ev.Raw) < 2 || ev.Raw[0] != '{' {
		return ev
	}
	e := *ev
	e.Raw = append([]byte(traceField+tp+`",`), ev.Raw[1:]...)
	return &e
}

// splitTrace returns the trace context withTrace put in raw ("" for none) and raw without it.
func splitTrace(raw []byte) (string, []byte) {
	rest, ok := bytes.CutPrefix(raw, []byte(traceField))
	i := bytes.IndexByte(rest, '"')
	if !ok || i < 0 || i+1 >= len(rest) || rest[i+1] != ',' {
		return "", raw
	}
	return string(rest[:i]), append([]byte{'{'}, rest[i+2:]...)
}

// watchEvent names the rows a hub shares for a traced wait (see Hub.Watch):
// not a webhook event, a generation id and its job's trace context.
const watchEvent webhook.EventName = "mediagen.wait"

// shareTimeout bounds the sharing of a wait's trace context: an exchange
// that hangs (a database that stopped answering) costs the link, not the wait.
const shareTimeout = time.Second

// shareTraces shares the trace contexts of the traced jobs of keys, once per
// job; a failure only costs the link.
func (h *Hub) shareTraces(ctx context.Context, keys []Key) {
	ctx, cancel := context.WithTimeout(ctx, shareTimeout)
	defer cancel()
	for _, k := range keys {
		if k.Voice {
			continue
		}
		tp := telemetry.Watched(k.ID)
		if tp == "" {
			continue
		}
		id, _ := json.Marshal(k.ID)
		raw := fmt.Appendf(nil, `{"event":%q,"generation":{"id":%s}}`, watchEvent, id)
		ev := &webhook.Event{Name: watchEvent, Generation: &mediagen.Generation{ID: k.ID}, Raw: raw}
		if err := h.x.Publish(ctx, withTrace(ev, tp)); err != nil {
			h.onError(fmt.Errorf("hub: sharing the trace of a wait: %w", err))
		}
	}
}

// noteTrace keeps the trace contexts other replicas' waits shared, as many as the hub keeps events.
func (h *Hub) noteTrace(ev *webhook.Event, tp string) {
	if ev.Generation == nil || ev.Generation.ID == "" || tp == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.traces[ev.Generation.ID]; !ok {
		h.traced = append(h.traced, ev.Generation.ID)
	}
	h.traces[ev.Generation.ID] = tp
	if n := len(h.traced) - h.size; n > 0 {
		for _, id := range h.traced[:n] {
			delete(h.traces, id)
		}
		h.traced = h.traced[n:] // append copies only the live ids when it grows
	}
}
