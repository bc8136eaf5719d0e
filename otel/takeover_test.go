package otel_test

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	_ "modernc.org/sqlite"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/webhook"
)

// TestTakeoverContinuesTrace: a client whose call dies after its request
// reached the service leaves the key held; a second client on the same
// journal takes the key over, finds the generation, and its job continues
// the first client's trace: a resume span, a child of the first job span
// and linked to it, so the trace has one generation span.
func TestTakeoverContinuesTrace(t *testing.T) {
	t.Run("memory", func(t *testing.T) { takeover(t, journal.NewMemory()) })
	t.Run("sqlite", func(t *testing.T) {
		db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "journal.db")+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		j, err := journal.Open(t.Context(), db, mediagen.SQLite)
		require.NoError(t, err)
		takeover(t, j)
	})
}

func takeover(t *testing.T, j journal.Journal) {
	rec := newRecorder(t)
	srv := clienttest.NewServer(t)
	ctx1, die := context.WithCancel(t.Context())
	first := srv.Client(client.WithTracerProvider(rec.tp), client.WithJournal(j), client.WithJournalHold(time.Second),
		client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			resp, err := next(req)
			if err == nil && req.Method == http.MethodPost {
				resp.Body.Close()
				die() // the process dies with the request sent
				return nil, context.Canceled
			}
			return resp, err
		}))
	args := client.ImageGenerationArgs{Prompt: "a lighthouse"}
	_, err := first.CreateGeneration(ctx1, args, client.WithIdempotencyKey("order-31"))
	require.ErrorIs(t, err, context.Canceled)

	second := srv.Client(client.WithTracerProvider(rec.tp), client.WithJournal(j))
	g, err := second.CreateGeneration(t.Context(), args, client.WithIdempotencyKey("order-31"))
	require.NoError(t, err)
	_, err = poll.Generation(t.Context(), second, g.ID)
	require.NoError(t, err)

	jobs := jobSpans(rec)
	require.Len(t, jobs, 2)
	firstJob, secondJob := jobs[0], jobs[1]
	if firstJob.Parent.IsValid() {
		firstJob, secondJob = secondJob, firstJob
	}
	assert.False(t, firstJob.Parent.IsValid(), "the first job is the root")
	assert.Equal(t, "mediagen.generation", firstJob.Name)
	assert.Equal(t, "mediagen.generation.resume", secondJob.Name)
	v, _ := attr(secondJob, "mediagen.status")
	assert.Equal(t, "done", v.AsString(), "the resume carries the end")
	assert.Equal(t, firstJob.SpanContext.TraceID(), secondJob.SpanContext.TraceID(), "the second job continues the trace")
	assert.Equal(t, firstJob.SpanContext.SpanID(), secondJob.Parent.SpanID())
	require.Len(t, secondJob.Links, 1)
	assert.Equal(t, firstJob.SpanContext.SpanID(), secondJob.Links[0].SpanContext.SpanID())
	v, _ = attr(secondJob, "mediagen.generation.id")
	assert.Equal(t, g.ID, v.AsString())
	key, _ := attr(secondJob, "mediagen.idempotency_key.sha256")
	assert.Len(t, key.AsString(), 64, "the key is hashed")
	noSecret(t, rec.spans.GetSpans(), []string{"order-31", srv.APIKey()})
}

// TestWebhookEndsWait: a wait fed by a hub ends on the webhook event; the
// job says so, and the delivery's span links to the job.
func TestWebhookEndsWait(t *testing.T) {
	rec := newRecorder(t)
	srv := clienttest.NewServer(t)
	h, err := hub.New()
	require.NoError(t, err)
	receiver, err := webhook.Handler(srv.WebhookSecret(), h.Deliver, webhook.WithNow(srv.Now))
	require.NoError(t, err)
	hs := httptest.NewServer(receiver)
	t.Cleanup(hs.Close)
	c := srv.Client(client.WithTracerProvider(rec.tp), client.WithMeterProvider(rec.mp), client.WithWebhookURL(hs.URL))

	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"})
	require.NoError(t, err)
	srv.Advance(time.Minute) // the render ends and its event is delivered
	srv.WaitDeliveries()
	_, err = poll.Generation(t.Context(), c, g.ID, poll.WithHub(h))
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
	v, _ := attr(job, "mediagen.wait.ended_by")
	assert.Equal(t, "webhook", v.AsString())
	require.Len(t, delivery.Links, 1, "the delivery links to the job")
	assert.Equal(t, job.SpanContext.SpanID(), delivery.Links[0].SpanContext.SpanID())
	m := rec.metrics(t)
	assert.Equal(t, int64(1), sumInt(m["mediagen.webhook.deliveries"]))
	assert.Equal(t, int64(1), sumInt(m["mediagen.waits"]))
	noSecret(t, rec.spans.GetSpans(), []string{srv.APIKey(), srv.WebhookSecret()})
}
