package otel_test

import (
	"bufio"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// receiverEnv names, for the child of TestDeliveryOnAnotherProcessLinksToJob,
// the exchange's SQLite file and the webhook secret, a space apart.
const receiverEnv = "MEDIAGEN_OTEL_RECEIVER_CHILD"

// TestDeliveryOnAnotherProcessLinksToJob: the wait runs in this process,
// the webhook lands on a receiver in another (the test binary again), and
// the two hubs share one SQLite exchange. The receiver's delivery span links
// to this process's job span (its trace context came through the exchange
// when the wait began), and the job links back to the delivery.
func TestDeliveryOnAnotherProcessLinksToJob(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	rec := newRecorder(t)
	// On the wall clock an image renders in 0.8 s: the receiver has read
	// the wait's trace context long before its webhook comes.
	srv := clienttest.NewServer(t, clienttest.WithWallClock(), clienttest.WithRenderScale(0.1))
	path := filepath.Join(t.TempDir(), "events.db")
	db := openExchangeDB(t, path)

	cmd := exec.Command(os.Args[0], "-test.run=^TestReceiverChild$", "-test.v")
	cmd.Env = append(os.Environ(), receiverEnv+"="+path+" "+srv.WebhookSecret())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	url := next(t, lines, "url ")

	x, err := hub.OpenSQLExchange(t.Context(), db, mediagen.SQLite)
	require.NoError(t, err)
	a, err := hub.New(hub.WithExchange(x, 10*time.Millisecond, func(err error) { t.Error(err) }))
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	c := srv.Client(client.WithTracerProvider(rec.tp), client.WithWebhookURL(url))

	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := poll.Generation(t.Context(), c, g.ID, poll.WithHub(a))
		done <- err
	}()
	require.Eventually(t, func() bool {
		var n int
		err := db.QueryRow(`SELECT count(*) FROM mediagen_events WHERE body LIKE ?`, `%"mediagen.wait"%`+g.ID+`%`).Scan(&n)
		return err == nil && n == 1
	}, 5*time.Second, 5*time.Millisecond, "the wait shared its job's trace context")
	fields := strings.Fields(next(t, lines, "delivery "))
	require.Len(t, fields, 3, "<trace> <span> <linked trace>-<linked span>")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end")
	}

	var job tracetest.SpanStub
	for _, s := range rec.spans.GetSpans() {
		if s.Name == "mediagen.generation" {
			job = s
		}
	}
	require.True(t, job.SpanContext.IsValid())
	assert.Equal(t, job.SpanContext.TraceID().String()+"-"+job.SpanContext.SpanID().String(), fields[2],
		"the delivery on the other process links to the job")
	require.Len(t, job.Links, 1, "the job links to the delivery")
	assert.Equal(t, fields[0], job.Links[0].SpanContext.TraceID().String())
	assert.Equal(t, fields[1], job.Links[0].SpanContext.SpanID().String())
	v, _ := attr(job, "mediagen.wait.ended_by")
	assert.Equal(t, "webhook", v.AsString())
}

// TestReceiverChild is the child of TestDeliveryOnAnotherProcessLinksToJob:
// a webhook receiver whose hub shares the exchange. It prints its URL, then
// a line per delivery span with the span it links to; it skips unless run
// as the child.
func TestReceiverChild(t *testing.T) {
	env := os.Getenv(receiverEnv)
	if env == "" {
		t.Skip("the child of TestDeliveryOnAnotherProcessLinksToJob")
	}
	path, secret, _ := strings.Cut(env, " ")
	rec := newRecorder(t)
	x, err := hub.OpenSQLExchange(t.Context(), openExchangeDB(t, path), mediagen.SQLite)
	require.NoError(t, err)
	b, err := hub.New(hub.WithExchange(x, 10*time.Millisecond, func(err error) { t.Error(err) }))
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	// The receiver's spans go to its own provider: the delivery carries
	// the context of the request, whose span is this provider's.
	ctx, root := rec.tp.Tracer("receiver").Start(t.Context(), "receiver")
	defer root.End()
	receiver, err := webhook.Handler(secret, b.Deliver)
	require.NoError(t, err)
	printed := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		receiver.ServeHTTP(w, r.WithContext(ctx))
		for _, s := range rec.spans.GetSpans()[printed:] {
			printed++
			if s.Name != "mediagen.webhook.deliver" || len(s.Links) != 1 {
				continue
			}
			l := s.Links[0].SpanContext
			fmt.Printf("delivery %s %s %s-%s\n", s.SpanContext.TraceID(), s.SpanContext.SpanID(), l.TraceID(), l.SpanID())
		}
	}))
	defer hs.Close()
	fmt.Println("url", hs.URL)
	time.Sleep(time.Minute) // the parent kills it
}

func openExchangeDB(t *testing.T, path string) *sql.DB {
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// next returns the rest of the first line of lines that starts with
// prefix, failing after 10 s.
func next(t *testing.T, lines <-chan string, prefix string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the child ended before printing %q", prefix)
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return rest
			}
		case <-timeout:
			t.Fatalf("the child printed no %q line", prefix)
		}
	}
}
