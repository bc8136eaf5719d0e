package otel_test

import (
	"context"
	"database/sql"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/webhook"
)

// TestExchangedDeliveryLinks: the webhook lands on replica B's hub, the
// wait runs on replica A's; the two share one SQLite exchange. The event
// carries B's delivery span context, and A's job links to that span with
// a "webhook" event. (TestDeliveryOnAnotherProcessLinksToJob checks the
// link from the delivery to the job, which in one process the hub finds
// without the exchange.)
func TestExchangedDeliveryLinks(t *testing.T) {
	rec := newRecorder(t)
	srv := clienttest.NewServer(t)
	dsn := filepath.Join(t.TempDir(), "events.db") + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)"
	replica := func() *hub.Hub {
		db, err := sql.Open("sqlite", dsn)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		x, err := hub.OpenSQLExchange(t.Context(), db, mediagen.SQLite)
		require.NoError(t, err)
		h, err := hub.New(hub.WithExchange(x, 10*time.Millisecond, func(err error) { t.Error(err) }))
		require.NoError(t, err)
		t.Cleanup(func() { _ = h.Close() })
		return h
	}
	a, b := replica(), replica()
	receiver, err := webhook.Handler(srv.WebhookSecret(), b.Deliver, webhook.WithNow(srv.Now))
	require.NoError(t, err)
	hs := httptest.NewServer(receiver)
	t.Cleanup(hs.Close)
	c := srv.Client(client.WithTracerProvider(rec.tp), client.WithWebhookURL(hs.URL))

	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"})
	require.NoError(t, err)
	srv.Advance(time.Minute)
	srv.WaitDeliveries()
	require.Eventually(t, func() bool {
		_, ok := a.Lookup(hub.Key{ID: g.ID})
		return ok
	}, 5*time.Second, 5*time.Millisecond, "the event reaches replica A through the exchange")
	ev, _ := a.Lookup(hub.Key{ID: g.ID})
	assert.NotContains(t, string(ev.Raw), "mediagen_traceparent", "the trace context is taken out of the event")
	_, err = poll.Generation(t.Context(), c, g.ID, poll.WithHub(a))
	require.NoError(t, err)

	var job, delivery tracetest.SpanStub
	for _, s := range rec.spans.GetSpans() {
		switch s.Name {
		case "mediagen.generation":
			job = s
		case "mediagen.webhook.deliver":
			delivery = s
		}
	}
	require.True(t, delivery.SpanContext.IsValid(), "replica B traced the delivery")
	v, _ := attr(job, "mediagen.wait.ended_by")
	assert.Equal(t, "webhook", v.AsString())
	require.Len(t, job.Links, 1, "the job links to the delivery on the other replica")
	assert.Equal(t, delivery.SpanContext.SpanID(), job.Links[0].SpanContext.SpanID())
	assert.Equal(t, delivery.SpanContext.TraceID(), job.Links[0].SpanContext.TraceID())
	var events []string
	for _, e := range job.Events {
		events = append(events, e.Name)
	}
	assert.Contains(t, events, "webhook")
}

// stuckExchange is a database that stopped answering: its calls return only
// when their context ends.
type stuckExchange struct{}

func (stuckExchange) Publish(ctx context.Context, _ *webhook.Event) error {
	<-ctx.Done()
	return ctx.Err()
}

func (stuckExchange) Since(ctx context.Context, cursor int64) ([]*webhook.Event, int64, error) {
	<-ctx.Done()
	return nil, cursor, ctx.Err()
}

// A traced wait shares its job's trace context through the exchange; an
// exchange that hangs costs that link, not the wait.
func TestStuckExchangeCostsOnlyTheLink(t *testing.T) {
	rec := newRecorder(t)
	srv := clienttest.NewServer(t)
	var shareErrs atomic.Int32
	h, err := hub.New(hub.WithExchange(stuckExchange{}, time.Hour, func(error) { shareErrs.Add(1) }))
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	c := srv.Client(client.WithTracerProvider(rec.tp))
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"})
	require.NoError(t, err)
	srv.Advance(time.Minute)

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second) // a wait's own bound is far off
	defer cancel()
	start := time.Now()
	got, err := poll.Generation(ctx, c, g.ID, poll.WithHub(h))
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, got.Status)
	assert.Less(t, time.Since(start), 10*time.Second, "the share gave up long before the wait's bound")
	assert.Positive(t, shareErrs.Load(), "the failed share is reported")
}
