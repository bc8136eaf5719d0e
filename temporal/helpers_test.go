package mediagentemporal_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/pgtest"
	mt "github.com/mediagen/mediagen-go/temporal"
)

// TestMain stops the PostgreSQL server the tests may have started.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := pgtest.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the test PostgreSQL server:", err)
	}
	os.Exit(code)
}

// fixture is a reference server behind a front that counts the submissions
// the server receives.
type fixture struct {
	srv   *clienttest.Server
	url   string
	posts atomic.Int64 // POST /v3/generations that reached the server
}

func newFixture(t *testing.T, opts ...clienttest.Option) *fixture {
	t.Helper()
	f := &fixture{srv: clienttest.NewServer(t, opts...)}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v3/generations" {
			f.posts.Add(1)
		}
		f.srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	f.url = front.URL
	return f
}

// client is a client of the server through the counting front.
func (f *fixture) client(opts ...client.Option) *client.Client {
	return f.srv.Client(append([]client.Option{client.WithBaseURL(f.url)}, opts...)...)
}

// generations lists every generation the server holds.
func (f *fixture) generations(t *testing.T) []*mediagen.Generation {
	t.Helper()
	var out []*mediagen.Generation
	for g, err := range f.srv.Client().Generations(t.Context(), client.ListParams{Limit: 100}) {
		require.NoError(t, err)
		out = append(out, g)
	}
	return out
}

// failFirstRead is middleware that fails the first read of each generation
// by id: with client.WithMaxRetries(0) that ends the activity's wait, as a
// worker lost mid-wait would.
func failFirstRead() client.Middleware {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if id, ok := strings.CutPrefix(req.URL.Path, "/v3/generations/"); ok && req.Method == http.MethodGet {
			mu.Lock()
			first := !seen[id]
			seen[id] = true
			mu.Unlock()
			if first {
				return nil, errors.New("injected: worker lost")
			}
		}
		return next(req)
	}
}

func image(prompt string) mt.Request {
	return mt.Request{Feature: "image/generation", Args: map[string]any{"prompt": prompt}}
}

// generateAll is a workflow that runs Generate for every request at once,
// retrying as a production workflow would.
func generateAll(ctx workflow.Context, reqs []mt.Request) ([]mt.Result, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 20},
	})
	var a *mt.Activities
	futures := make([]workflow.Future, len(reqs))
	for i, r := range reqs {
		futures[i] = workflow.ExecuteActivity(ctx, a.Generate, r)
	}
	out := make([]mt.Result, len(reqs))
	for i, f := range futures {
		if err := f.Get(ctx, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// workflowEnv returns a test workflow environment with acts registered and
// a count of activity attempts started. It checks that every attempt of an
// activity derives the same idempotency key.
func workflowEnv(t *testing.T, acts *mt.Activities) (*testsuite.TestWorkflowEnvironment, *atomic.Int64) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	env.RegisterWorkflow(generateAll)
	env.RegisterActivity(acts)
	var attempts atomic.Int64
	var mu sync.Mutex
	keys := map[string]string{} // activity id -> key of its first attempt
	env.SetOnActivityStartedListener(func(info *activity.Info, ctx context.Context, _ converter.EncodedValues) {
		attempts.Add(1)
		mu.Lock()
		defer mu.Unlock()
		if k, ok := keys[info.ActivityID]; ok {
			assert.Equal(t, k, mt.Key(ctx), "attempt %d of activity %s", info.Attempt, info.ActivityID)
		}
		keys[info.ActivityID] = mt.Key(ctx)
	})
	return env, &attempts
}

func newActivities(t *testing.T, c *client.Client, opts ...mt.Option) *mt.Activities {
	t.Helper()
	a, err := mt.New(c, opts...)
	require.NoError(t, err)
	return a
}
