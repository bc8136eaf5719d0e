package otel_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/poll"
)

// childEnv names the reference server's URL for the child process of
// TestProcessTakeover; the journal's path follows it after a space.
const childEnv = "MEDIAGEN_OTEL_TAKEOVER_CHILD"

const processKey = "order-31-process"

// TestProcessTakeover runs a child process (this test binary again) that
// creates a generation with a key on an SQLite journal, with tracing on,
// and is SIGKILLed once its request reached the service, the key still
// held and its wait not begun. This process then takes the key over: its
// job's resume span continues the child's trace, whose id the child printed
// and the journal recorded.
func TestProcessTakeover(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	rec := newRecorder(t)
	srv := clienttest.NewServer(t, clienttest.WithWallClock())
	path := filepath.Join(t.TempDir(), "journal.db")
	j := openJournal(t, path)

	cmd := exec.Command(os.Args[0], "-test.run=^TestTakeoverChild$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+srv.URL()+" "+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(out)
	var childTrace string
	for lines.Scan() {
		if tr, ok := strings.CutPrefix(lines.Text(), "trace "); ok {
			childTrace = tr
		}
		if lines.Text() == "sent" {
			break
		}
	}
	require.NotEmpty(t, childTrace, "the child printed its trace id, then that its request was sent")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	held, err := j.Get(t.Context(), processKey)
	require.NoError(t, err)
	require.Empty(t, held.ID, "the child died holding the key")
	recorded := trace.SpanContextFromContext(traceContext(held.Trace))
	require.Equal(t, childTrace, recorded.TraceID().String(), "the journal has the child's trace")

	c := srv.Client(client.WithTracerProvider(rec.tp), client.WithJournal(j))
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"}, client.WithIdempotencyKey(processKey))
	require.NoError(t, err)
	_, err = poll.Generation(t.Context(), c, g.ID)
	require.NoError(t, err)

	var job tracetest.SpanStub
	for _, s := range rec.spans.GetSpans() {
		if s.Name == "mediagen.generation.resume" {
			job = s
		}
	}
	assert.Equal(t, childTrace, job.SpanContext.TraceID().String(), "the job continues the child's trace")
	assert.Equal(t, recorded.SpanID(), job.Parent.SpanID(), "a child of the child's job span")
	require.Len(t, job.Links, 1)
	assert.Equal(t, recorded.SpanID(), job.Links[0].SpanContext.SpanID())
	v, _ := attr(job, "mediagen.generation.id")
	assert.Equal(t, g.ID, v.AsString())
	v, _ = attr(job, "mediagen.status")
	assert.Equal(t, "done", v.AsString())
	noSecret(t, rec.spans.GetSpans(), []string{processKey, srv.APIKey()})
}

// TestTakeoverChild is the child of TestProcessTakeover; it skips unless
// run as one.
func TestTakeoverChild(t *testing.T) {
	env := os.Getenv(childEnv)
	if env == "" {
		t.Skip("the child of TestProcessTakeover")
	}
	url, path, _ := strings.Cut(env, " ")
	rec := newRecorder(t)
	ctx, root := rec.tp.Tracer("child").Start(context.Background(), "child")
	fmt.Println("trace", root.SpanContext().TraceID())
	c, err := client.New(clienttest.APIKey, client.WithBaseURL(url), client.WithTracerProvider(rec.tp),
		client.WithJournal(openJournal(t, path)), client.WithJournalHold(time.Second),
		client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			resp, err := next(req)
			if err == nil && req.Method == http.MethodPost {
				fmt.Println("sent")
				time.Sleep(time.Minute) // SIGKILL comes first
			}
			return resp, err
		}))
	require.NoError(t, err)
	_, err = c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a lighthouse"}, client.WithIdempotencyKey(processKey))
	t.Fatalf("the create returned (%v) instead of hanging until killed", err)
}

func openJournal(t *testing.T, path string) journal.Journal {
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	j, err := journal.Open(t.Context(), db, mediagen.SQLite)
	require.NoError(t, err)
	return j
}

// traceContext returns a context with the remote span of a traceparent.
func traceContext(traceparent string) context.Context {
	return propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
}
