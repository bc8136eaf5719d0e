package riverjob_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/pgtest"
	riverjob "github.com/mediagen/mediagen-go/river"
	"github.com/mediagen/mediagen-go/webhook"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := pgtest.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// env is a reference server on the wall clock, a PostgreSQL database with
// River's tables and the store's, and a webhook receiver that wakes jobs.
type env struct {
	srv   *clienttest.Server
	pool  *pgxpool.Pool
	db    *sql.DB
	store *riverjob.Store
	rc    *river.Client[pgx.Tx] // inserts and wakes; works nothing
	hook  string
	busy  atomic.Int64 // Work calls running, over every worker
	peak  atomic.Int64
}

func newEnv(t *testing.T, opts ...clienttest.Option) *env {
	t.Helper()
	return newEnvAt(t, pgtest.DSN(t), opts...)
}

// newEnvAt is newEnv on the database of dsn.
func newEnvAt(t *testing.T, dsn string, opts ...clienttest.Option) *env {
	t.Helper()
	return newEnvOf(t, dsn, clienttest.NewServer(t, append([]clienttest.Option{clienttest.WithWallClock(), clienttest.WithRenderScale(0.02)}, opts...)...))
}

// newEnvOf is newEnvAt with the server srv, such as one on a fake clock.
func newEnvOf(t *testing.T, dsn string, srv *clienttest.Server) *env {
	t.Helper()
	ctx := t.Context()
	e := &env{srv: srv}
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	e.pool = pool
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	require.NoError(t, err)
	_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	require.NoError(t, err)
	e.db = stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() { e.db.Close() })
	e.store, err = riverjob.Open(ctx, e.db, mediagen.PostgreSQL)
	require.NoError(t, err)
	e.rc, err = river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	waker, err := riverjob.NewWaker(e.rc, e.store)
	require.NoError(t, err)
	h, err := webhook.Handler(e.srv.WebhookSecret(), waker.Deliver)
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	e.hook = hs.URL
	return e
}

// client returns a client of the server whose calls record in the store's
// journal.
func (e *env) client(opts ...client.Option) *client.Client {
	return e.srv.MustClient(append([]client.Option{client.WithJournal(e.store.Journal())}, opts...)...)
}

// counting counts the Work calls running at once in busy, and the most
// at once in peak.
type counting struct {
	*riverjob.Worker
	busy, peak *atomic.Int64
}

func (w counting) Work(ctx context.Context, job *river.Job[riverjob.Args]) error {
	n := w.busy.Add(1)
	defer w.busy.Add(-1)
	for p := w.peak.Load(); n > p && !w.peak.CompareAndSwap(p, n); p = w.peak.Load() {
	}
	return w.Worker.Work(ctx, job)
}

// worker starts a River client working the default queue with slots
// workers until ctx ends or the test does; it returns a function that kills
// it at once, as a lost machine, without waiting for its jobs.
func (e *env) worker(t *testing.T, slots int, c *client.Client, opts ...riverjob.Option) (kill func()) {
	t.Helper()
	w, err := riverjob.NewWorker(c, e.store, opts...)
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker[riverjob.Args](workers, counting{Worker: w, busy: &e.busy, peak: &e.peak})
	rc, err := river.NewClient(riverpgxv5.New(e.pool), &river.Config{
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: slots}},
		Workers:              workers,
		FetchPollInterval:    50 * time.Millisecond,
		FetchCooldown:        10 * time.Millisecond,
		JobTimeout:           20 * time.Second,
		RescueStuckJobsAfter: 30 * time.Second,
		Logger:               nil,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, rc.Start(ctx))
	stopped := false
	kill = func() {
		if stopped {
			return
		}
		stopped = true
		cancel() // work contexts end at once: as a process killed mid-call
		stopCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		_ = rc.StopAndCancel(stopCtx)
	}
	t.Cleanup(kill)
	return kill
}

// insert enqueues one job per args, keyed "k<i>".
func (e *env) insert(t *testing.T, args []client.Args) {
	t.Helper()
	params := make([]river.InsertManyParams, len(args))
	for i, a := range args {
		ja, err := riverjob.NewArgs(fmt.Sprintf("k%03d", i), a)
		require.NoError(t, err)
		params[i] = river.InsertManyParams{Args: ja}
	}
	_, err := e.rc.InsertMany(t.Context(), params)
	require.NoError(t, err)
}

// waitJobs waits until no job of the queue is left to work and returns the
// jobs by state.
func (e *env) waitJobs(t *testing.T, within time.Duration) map[rivertype.JobState][]*rivertype.JobRow {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		p, err := e.store.Progress(t.Context(), river.QueueDefault)
		require.NoError(t, err)
		if p.Queued+p.Rendering == 0 {
			break
		}
		require.Truef(t, time.Now().Before(deadline), "jobs still running after %v: %+v", within, p)
		time.Sleep(50 * time.Millisecond)
	}
	res, err := e.rc.JobList(t.Context(), river.NewJobListParams().First(10000).States(
		rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded))
	require.NoError(t, err)
	byState := map[rivertype.JobState][]*rivertype.JobRow{}
	for _, j := range res.Jobs {
		byState[j.State] = append(byState[j.State], j)
	}
	return byState
}

// perKey counts the generations the server made for each key, found by the
// key the test put at the start of each prompt or script.
func (e *env) perKey(t *testing.T) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for g, err := range e.srv.MustClient().Generations(t.Context(), client.ListParams{Limit: 100}) {
		require.NoError(t, err)
		text, _ := g.Params["prompt"].(string)
		if text == "" {
			text, _ = g.Params["script"].(string)
		}
		counts[strings.Fields(text)[0]]++
	}
	return counts
}

// mixed returns n arguments of mixed kinds (image, audio, video), each
// text starting with its key "k<i>".
func mixed(n int) []client.Args {
	out := make([]client.Args, n)
	for i := range out {
		text := fmt.Sprintf("k%03d a lighthouse at dusk", i)
		switch i % 3 {
		case 0:
			out[i] = client.ImageGenerationArgs{Prompt: text}
		case 1:
			out[i] = client.VoiceoverArgs{VoiceID: "ava-warm-narrator", Script: text}
		default:
			out[i] = client.AvatarArgs{VoiceID: "ava-warm-narrator", Script: text, PermissionConfirmed: true}
		}
	}
	return out
}
