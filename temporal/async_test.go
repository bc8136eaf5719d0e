package mediagentemporal_test

import (
	"context"
	"database/sql"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/internal/pgtest" // also registers "pgx"
	mt "github.com/mediagen/mediagen-go/temporal"
	"github.com/mediagen/mediagen-go/webhook"
)

// envCompleter completes activities in a test workflow environment.
type envCompleter struct {
	env *testsuite.TestWorkflowEnvironment
}

func (e envCompleter) CompleteActivity(_ context.Context, token []byte, result any, err error) error {
	return e.env.CompleteActivity(token, result, err)
}

// signalTokens tells when tokens are stored.
type signalTokens struct {
	mt.TokenStore
	put chan string
}

func (s signalTokens) Put(ctx context.Context, id string, p mt.Pending) error {
	err := s.TokenStore.Put(ctx, id, p)
	s.put <- id
	return err
}

// asyncRun runs generateAll over reqs with asynchronous completion: the
// reference server's webhooks reach a webhook.Handler whose callback is
// the Completer. Once every activity has stored its token, the server's
// clock moves on so that the renders end and their events are delivered.
func asyncRun(t *testing.T, f *fixture, reqs []mt.Request) (*testsuite.TestWorkflowEnvironment, int64, *mt.MemoryTokens) {
	t.Helper()
	var completer *mt.Completer
	h, err := webhook.Handler(f.srv.WebhookSecret(), func(ctx context.Context, ev *webhook.Event) error {
		return completer.Deliver(ctx, ev)
	}, webhook.WithNow(f.srv.Now))
	require.NoError(t, err)
	recv := httptest.NewServer(h)
	t.Cleanup(recv.Close)

	mem := mt.NewMemoryTokens()
	tokens := signalTokens{TokenStore: mem, put: make(chan string, len(reqs))}
	acts := newActivities(t, f.client(client.WithWebhookURL(recv.URL)), mt.WithAsyncCompletion(tokens))
	env, attempts := workflowEnv(t, acts)
	completer, err = acts.Completer(envCompleter{env})
	require.NoError(t, err)

	released := make(chan struct{})
	env.RegisterWorkflow(heldAll)
	env.RegisterActivityWithOptions(func(context.Context) error { <-released; return nil }, activity.RegisterOptions{Name: "hold"})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(released)
		for range reqs {
			<-tokens.put
		}
		f.srv.Advance(time.Minute)
		f.srv.WaitDeliveries()
	})
	env.ExecuteWorkflow(heldAll, reqs)
	wg.Wait()
	require.True(t, env.IsWorkflowCompleted())
	return env, attempts.Load() - 1, mem // less the hold
}

// heldAll is generateAll beside an activity that runs until the test
// releases it: the test environment skips time while no activity runs,
// which would time out the pending ones before their webhooks arrive.
func heldAll(ctx workflow.Context, reqs []mt.Request) ([]mt.Result, error) {
	held := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Hour}), "hold")
	res, err := generateAll(ctx, reqs)
	if herr := held.Get(ctx, nil); err == nil {
		err = herr
	}
	return res, err
}

func TestAsyncCompletionByWebhook(t *testing.T) {
	f := newFixture(t)
	reqs := []mt.Request{image("a"), image("b"), image("c")}
	reqs[0].SaveTo = t.TempDir()
	env, attempts, mem := asyncRun(t, f, reqs)
	require.NoError(t, env.GetWorkflowError())
	var res []mt.Result
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Len(t, res, len(reqs))
	for _, r := range res {
		assert.Equal(t, mediagen.GenerationStatusDone, r.Generation.Status)
	}
	require.NotNil(t, res[0].Saved, "the Completer saved the output before completing")
	assert.FileExists(t, res[0].Saved.Path)
	assert.EqualValues(t, len(reqs), attempts, "completed by the webhook, not by retries")
	assert.EqualValues(t, len(reqs), f.posts.Load())
	for _, r := range res {
		_, ok, err := mem.Take(t.Context(), r.Generation.ID)
		require.NoError(t, err)
		assert.False(t, ok, "the token was used up")
	}
}

func TestAsyncFailedRenderIsNonRetryable(t *testing.T) {
	f := newFixture(t, clienttest.WithOutcome(func(mediagen.Feature) clienttest.Outcome { return clienttest.OutcomeTimeout }))
	env, attempts, _ := asyncRun(t, f, []mt.Request{image("doomed")})
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(env.GetWorkflowError(), &appErr), "%v", env.GetWorkflowError())
	assert.True(t, appErr.NonRetryable())
	assert.Equal(t, mt.ErrorFailed, appErr.Type())
	var fail mt.Failure
	require.NoError(t, appErr.Details(&fail))
	assert.Equal(t, "timeout", fail.Status)
	assert.NotEmpty(t, fail.GenerationID)
	assert.EqualValues(t, 1, attempts)
	assert.EqualValues(t, 1, f.posts.Load())
}

// TestTokenStores runs the stores through the same steps: a put, a
// replacing put, a take that gets the latest, a take that gets nothing.
func TestTokenStores(t *testing.T) {
	open := func(driver string, d mediagen.Dialect, dsn func(testing.TB) string) func(t *testing.T) mt.TokenStore {
		return func(t *testing.T) mt.TokenStore {
			db, err := sql.Open(driver, dsn(t))
			require.NoError(t, err)
			t.Cleanup(func() { db.Close() })
			s, err := mt.OpenSQLTokens(t.Context(), db, d, mt.WithTokenTable("tokens"))
			require.NoError(t, err)
			again, err := mt.OpenSQLTokens(t.Context(), db, d, mt.WithTokenTable("tokens"))
			require.NoError(t, err, "opening twice keeps the table")
			_, err = again.Cleanup(t.Context(), time.Now().Add(-time.Hour))
			require.NoError(t, err)
			return s
		}
	}
	sqlite := func(tb testing.TB) string {
		return "file:" + filepath.Join(tb.TempDir(), "tokens.db") + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)"
	}
	stores := map[string]func(t *testing.T) mt.TokenStore{
		"Memory":     func(*testing.T) mt.TokenStore { return mt.NewMemoryTokens() },
		"SQLite":     open("sqlite", mediagen.SQLite, sqlite),
		"PostgreSQL": open("pgx", mediagen.PostgreSQL, pgtest.DSN),
	}
	for name, openStore := range stores {
		t.Run(name, func(t *testing.T) {
			s := openStore(t)
			ctx := t.Context()
			require.NoError(t, s.Put(ctx, "gen_1", mt.Pending{Token: []byte{0, 1, 2}, Key: "k", SaveTo: "/a"}))
			want := mt.Pending{Token: []byte{3, 4, 255}, Key: "k", SaveTo: "/b"}
			require.NoError(t, s.Put(ctx, "gen_1", want))
			got, ok, err := s.Take(ctx, "gen_1")
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, want, got)
			_, ok, err = s.Take(ctx, "gen_1")
			require.NoError(t, err)
			assert.False(t, ok)

			// Of many takers racing, one gets the token.
			require.NoError(t, s.Put(ctx, "gen_2", want))
			var mu sync.Mutex
			won := 0
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					_, ok, err := s.Take(ctx, "gen_2")
					assert.NoError(t, err)
					mu.Lock()
					defer mu.Unlock()
					if ok {
						won++
					}
				})
			}
			wg.Wait()
			assert.Equal(t, 1, won)
		})
	}
	// Tokens of activities whose webhook never came are deleted by age, in
	// memory as in SQL.
	for _, name := range []string{"Memory", "SQLite"} {
		t.Run("Cleanup/"+name, func(t *testing.T) {
			st := stores[name](t).(interface {
				mt.TokenStore
				Cleanup(context.Context, time.Time) (int64, error)
			})
			require.NoError(t, st.Put(t.Context(), "gen_old", mt.Pending{Token: []byte{1}}))
			n, err := st.Cleanup(t.Context(), time.Now().Add(-time.Hour))
			require.NoError(t, err)
			assert.Zero(t, n, "a fresh token stays")
			n, err = st.Cleanup(t.Context(), time.Now().Add(time.Second))
			require.NoError(t, err)
			assert.EqualValues(t, 1, n)
			_, ok, err := st.Take(t.Context(), "gen_old")
			require.NoError(t, err)
			assert.False(t, ok)
		})
	}
	_, err := mt.OpenSQLTokens(t.Context(), nil, mediagen.Dialect(9), mt.WithTokenTable("bad name"))
	assert.Error(t, err)
}

// A retried attempt of an asynchronous activity (the first one's token
// timed out, its event lost) finds its generation finished and completes at
// once, with no POST and no token left behind; with a hub too, which never
// got the lost event.
func TestAsyncRetryOfFinishedGenerationCompletesAtOnce(t *testing.T) {
	t.Run("without hub", func(t *testing.T) { testAsyncRetryOfFinishedGeneration(t, false) })
	t.Run("with hub", func(t *testing.T) { testAsyncRetryOfFinishedGeneration(t, true) })
}

func testAsyncRetryOfFinishedGeneration(t *testing.T, withHub bool) {
	f := newFixture(t)
	c := f.client()
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a kite"})
	require.NoError(t, err)
	f.srv.Advance(time.Minute)
	mem := mt.NewMemoryTokens()
	opts := []mt.Option{mt.WithAsyncCompletion(mem)}
	if withHub {
		h, err := hub.New()
		require.NoError(t, err)
		opts = append(opts, mt.WithHub(h))
	}
	acts := newActivities(t, c, opts...)
	env := activityEnv(acts)
	env.SetHeartbeatDetails(g.ID)
	v, err := env.ExecuteActivity(acts.Generate, image("a kite"))
	require.NoError(t, err)
	var res mt.Result
	require.NoError(t, v.Get(&res))
	assert.Equal(t, g.ID, res.Generation.ID)
	assert.Equal(t, mediagen.GenerationStatusDone, res.Generation.Status)
	assert.EqualValues(t, 1, f.posts.Load(), "only the first attempt's")
	_, ok, err := mem.Take(t.Context(), g.ID)
	require.NoError(t, err)
	assert.False(t, ok)
}

// A retried asynchronous attempt whose generation expired or was deleted
// fails with the non-retryable ErrorGone, as a waiting one does, and leaves
// no token behind; it was a retryable error, retried with no end.
func TestAsyncRetryOfGoneGenerationIsNonRetryable(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a kite"})
	require.NoError(t, err)
	require.NoError(t, c.DeleteGeneration(t.Context(), g.ID))
	mem := mt.NewMemoryTokens()
	acts := newActivities(t, c, mt.WithAsyncCompletion(mem))
	env := activityEnv(acts)
	env.SetHeartbeatDetails(g.ID)
	_, err = env.ExecuteActivity(acts.Generate, image("a kite"))
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	assert.True(t, appErr.NonRetryable())
	assert.Equal(t, mt.ErrorGone, appErr.Type())
	var fail mt.Failure
	require.NoError(t, appErr.Details(&fail))
	assert.Equal(t, g.ID, fail.GenerationID)
	_, ok, err := mem.Take(t.Context(), g.ID)
	require.NoError(t, err)
	assert.False(t, ok, "no token left behind")
	assert.EqualValues(t, 1, f.posts.Load())
}
