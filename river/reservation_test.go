package riverjob_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/pgtest"
	"github.com/mediagen/mediagen-go/poll"
	riverjob "github.com/mediagen/mediagen-go/river"
)

// A job an operator cancels while it snoozes after sending keeps what it
// may have cost spent, and nothing held: a job that does not fit beside it
// is cancelled over budget instead of waiting for room for ever.
func TestCancelledWhileSnoozedStaysSpent(t *testing.T) {
	e := newEnv(t)
	e.worker(t, 2, e.client())
	cancelWhileSnoozed(t, e.rc, e.store, e.srv, func(id int64) {
		_, err := e.rc.JobCancel(t.Context(), id)
		require.NoError(t, err)
		waitState(t, e.rc, id, rivertype.JobStateCancelled)
	})
}

// So does a job deleted while it snoozes after sending.
func TestDeletedWhileSnoozedStaysSpent(t *testing.T) {
	e := newEnv(t)
	e.worker(t, 2, e.client())
	cancelWhileSnoozed(t, e.rc, e.store, e.srv, func(id int64) {
		_, err := e.rc.JobDelete(t.Context(), id)
		require.NoError(t, err)
	})
}

// A job whose run ends after it reserved, before it recorded its key or
// sent anything, gives its reservation back, whether an operator cancelled
// it or its last attempt timed out (discarded): a job that waited for room
// runs, and the budget counts only that job's charge.
func TestUnsentJobReleasesItsReservation(t *testing.T) {
	for _, state := range []rivertype.JobState{rivertype.JobStateCancelled, rivertype.JobStateDiscarded} {
		t.Run(string(state), func(t *testing.T) {
			e := newEnv(t)
			ctx := t.Context()
			first := client.ImageGenerationArgs{Prompt: "k000 a kite"}
			require.NoError(t, e.store.SetBudget(ctx, river.QueueDefault, estimate(t, e.srv, first)*1.5))
			j := stuckClaim{Journal: e.store.Journal(), claiming: make(chan struct{}, 1), stuck: new(atomic.Bool)}
			opts := []riverjob.Option{}
			if state == rivertype.JobStateDiscarded {
				opts = append(opts, riverjob.WithTimeout(time.Second))
			}
			e.worker(t, 2, e.srv.MustClient(client.WithJournal(j)), opts...)
			before := e.srv.Balance()
			a := insertJob(t, e.rc, "k000", first, &river.InsertOpts{MaxAttempts: 1})
			<-j.claiming
			b := insertJob(t, e.rc, "k001", client.ImageGenerationArgs{Prompt: "k001 a kite"}, nil)
			if state == rivertype.JobStateCancelled {
				_, err := e.rc.JobCancel(ctx, a)
				require.NoError(t, err)
			}
			waitState(t, e.rc, a, state)
			job := waitState(t, e.rc, b, rivertype.JobStateCompleted)
			assert.Equal(t, map[string]int{"k001": 1}, e.perKey(t))
			budget, _, err := e.store.Budget(ctx, river.QueueDefault)
			require.NoError(t, err)
			assert.Zero(t, budget.Held)
			assert.InDelta(t, resultOf(t, job).Generation.BalanceUsed, budget.Spent, 1e-6)
			assert.InDelta(t, before-budget.Spent, e.srv.Balance(), 1e-6)
		})
	}
}

// stuckClaim is a journal whose first claim of the key k000 waits until
// its caller gives up, as a job that ends after it reserved and before it
// recorded its key: nothing was sent.
type stuckClaim struct {
	journal.Journal
	claiming chan struct{}
	stuck    *atomic.Bool // set by the first claim of k000
}

// Unwrap says which journal stuckClaim records in, for NewWorker.
func (j stuckClaim) Unwrap() journal.Journal { return j.Journal }

func (j stuckClaim) Claim(ctx context.Context, r journal.Record) (journal.Record, bool, error) {
	if r.Key != "k000" || j.stuck.Swap(true) {
		return j.Journal.Claim(ctx, r)
	}
	j.claiming <- struct{}{}
	<-ctx.Done()
	return journal.Record{}, false, ctx.Err()
}

// A job cancelled while its create is on its way, whose answer it never
// learns, keeps its estimate spent once its key's hold lapses: the holder
// may have been charged.
func TestCancelledWhileSendingStaysSpent(t *testing.T) {
	e := newEnv(t)
	sending := make(chan struct{}, 1)
	stuck := client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/generations") && len(sending) == 0 {
			sending <- struct{}{}
			<-req.Context().Done()
			return nil, req.Context().Err()
		}
		return next(req)
	})
	e.worker(t, 2, e.client(stuck, client.WithJournalHold(time.Second)))
	cancel := func(a int64) {
		<-sending
		_, err := e.rc.JobCancel(t.Context(), a)
		require.NoError(t, err)
		waitState(t, e.rc, a, rivertype.JobStateCancelled)
	}
	overBudget(t, e.rc, e.store, e.srv, cancel)
}

// cancelWhileSnoozed ends a job with end once it sent and snoozes; see
// overBudget.
func cancelWhileSnoozed[TTx any](t *testing.T, rc *river.Client[TTx], store *riverjob.Store, srv *clienttest.Server, end func(job int64)) {
	t.Helper()
	overBudget(t, rc, store, srv, func(a int64) {
		require.Eventually(t, func() bool {
			job, err := rc.JobGet(t.Context(), a)
			rec, rerr := store.Journal().Get(t.Context(), "k000")
			// A job snoozed a short while is available, but only once due.
			snoozed := err == nil && (job.State == rivertype.JobStateScheduled || job.State == rivertype.JobStateAvailable)
			return snoozed && rerr == nil && rec.ID != ""
		}, 30*time.Second, 20*time.Millisecond, "the job sent and snoozed")
		end(a)
	})
}

// overBudget adds a job, which end cancels or deletes once it may have
// been charged, then adds one the budget (one and a half estimates) has room
// for only if the first gave its reservation back: the second is cancelled
// over budget, nothing is held, and the first's estimate stays spent.
func overBudget[TTx any](t *testing.T, rc *river.Client[TTx], store *riverjob.Store, srv *clienttest.Server, end func(job int64)) {
	t.Helper()
	ctx := t.Context()
	first := client.ImageGenerationArgs{Prompt: "k000 a kite"}
	est := estimate(t, srv, first)
	require.NoError(t, store.SetBudget(ctx, river.QueueDefault, est*1.5))
	before := srv.Balance()
	a := insertJob(t, rc, "k000", first, nil)
	end(a)
	b := insertJob(t, rc, "k001", client.ImageGenerationArgs{Prompt: "k001 a kite"}, nil)
	job := waitState(t, rc, b, rivertype.JobStateCancelled)
	require.NotEmpty(t, job.Errors)
	assert.Contains(t, job.Errors[len(job.Errors)-1].Error, riverjob.ErrOverBudget.Error())
	budget, _, err := store.Budget(ctx, river.QueueDefault)
	require.NoError(t, err)
	assert.Zero(t, budget.Held)
	assert.InDelta(t, est, budget.Spent, 1e-6, "the estimate of the job that may have been charged stays spent")
	assert.LessOrEqual(t, before-srv.Balance(), budget.Spent+1e-9, "what was charged is counted")
}

// estimate returns the most args may cost on srv.
func estimate(t *testing.T, srv *clienttest.Server, args client.Args) float64 {
	t.Helper()
	p, err := srv.MustClient().Pricing(t.Context())
	require.NoError(t, err)
	est, err := p.Estimate(args)
	require.NoError(t, err)
	return est.Max
}

// insertJob enqueues the job of args with key and returns its id.
func insertJob[TTx any](t *testing.T, rc *river.Client[TTx], key string, args client.Args, opts *river.InsertOpts) int64 {
	t.Helper()
	ja, err := riverjob.NewArgs(key, args)
	require.NoError(t, err)
	res, err := rc.Insert(t.Context(), ja, opts)
	require.NoError(t, err)
	return res.Job.ID
}

// waitState waits until the job with id is in state, and returns it.
func waitState[TTx any](t *testing.T, rc *river.Client[TTx], id int64, state rivertype.JobState) *rivertype.JobRow {
	t.Helper()
	var job *rivertype.JobRow
	require.Eventuallyf(t, func() bool {
		var err error
		job, err = rc.JobGet(t.Context(), id)
		return err == nil && job.State == state
	}, 30*time.Second, 20*time.Millisecond, "job %d never %s", id, state)
	return job
}

// resultOf returns the output of a completed job.
func resultOf(t *testing.T, job *rivertype.JobRow) riverjob.Result {
	t.Helper()
	var res riverjob.Result
	require.NoError(t, json.Unmarshal(job.Output(), &res))
	return res
}

// The rows of a job that ended are deleted once older than the cutoff;
// those of a job not over yet, and a held reservation, are kept.
func TestCleanupDeletesRowsOfEndedJobs(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	require.NoError(t, e.store.SetBudget(ctx, river.QueueDefault, 10))
	kill := e.worker(t, 1, e.client())
	e.insert(t, mixed(1))
	require.Len(t, e.waitJobs(t, 30*time.Second)[rivertype.JobStateCompleted], 1)
	kill()
	waiting := insertJob(t, e.rc, "k001", client.ImageGenerationArgs{Prompt: "k001 a kite"}, nil) // no worker runs it
	_, err := e.db.ExecContext(ctx, `INSERT INTO mediagen_river_generations (id, job_id) VALUES ('g-waiting', $1)`, waiting)
	require.NoError(t, err)
	_, err = e.db.ExecContext(ctx, `INSERT INTO mediagen_river_reservations (key, queue, amount, state) VALUES ('k-held', 'default', 1, 'held')`)
	require.NoError(t, err)
	count := func(table string) (n int) {
		require.NoError(t, e.db.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n))
		return n
	}

	require.NoError(t, e.store.Cleanup(ctx, time.Now().Add(-time.Hour)))
	assert.Equal(t, 2, count("mediagen_river_generations"), "nothing is old enough")
	assert.Equal(t, 2, count("mediagen_river_reservations"))
	require.NoError(t, e.store.Cleanup(ctx, time.Now().Add(time.Second)))
	var id string
	require.NoError(t, e.db.QueryRowContext(ctx, `SELECT id FROM mediagen_river_generations`).Scan(&id))
	assert.Equal(t, "g-waiting", id)
	var key string
	require.NoError(t, e.db.QueryRowContext(ctx, `SELECT key FROM mediagen_river_reservations`).Scan(&key))
	assert.Equal(t, "k-held", key)
}

// A job whose generation the service forgot while it snoozed (expired
// after 24 hours, or deleted) keeps what it may have cost spent: the
// generation was charged and no event says it was refunded, so a job that
// does not fit beside it is cancelled over budget.
func TestGoneGenerationStaysSpent(t *testing.T) {
	for name, forget := range map[string]func(e *env, id string){
		"expired": func(e *env, _ string) { e.srv.Advance(25 * time.Hour) },
		"deleted": func(e *env, id string) { require.NoError(t, e.srv.MustClient().DeleteGeneration(t.Context(), id)) },
	} {
		t.Run(name, func(t *testing.T) {
			// On a fake clock renders wait for the test: the job snoozes,
			// checking, until its generation is gone.
			e := newEnvOf(t, pgtest.DSN(t), clienttest.NewServer(t))
			e.worker(t, 2, e.client())
			cancelWhileSnoozed(t, e.rc, e.store, e.srv, func(a int64) {
				rec, err := e.store.Journal().Get(t.Context(), "k000")
				require.NoError(t, err)
				forget(e, rec.ID)
				job := waitState(t, e.rc, a, rivertype.JobStateCancelled)
				require.NotEmpty(t, job.Errors)
				assert.Contains(t, job.Errors[len(job.Errors)-1].Error, poll.ErrGone.Error())
			})
		})
	}
}

// A key used again once the journal forgot it (journal.Retention after its
// call; River deletes finished jobs sooner) is sent anew: the new job holds
// its estimate and its charge is counted, beside the first job's charge,
// though the first job's settled reservation is still kept.
func TestForgottenKeyUsedAgainIsCounted(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	require.NoError(t, e.store.SetBudget(ctx, river.QueueDefault, 10))
	e.worker(t, 2, e.client())
	before := e.srv.Balance()
	args := client.ImageGenerationArgs{Prompt: "k000 a kite"}
	first := waitState(t, e.rc, insertJob(t, e.rc, "k000", args, nil), rivertype.JobStateCompleted)
	// What the cleaners do in time: River deletes the finished job, the
	// journal its record.
	_, err := e.rc.JobDelete(ctx, first.ID)
	require.NoError(t, err)
	_, err = e.store.Journal().Cleanup(ctx, time.Now().Add(time.Second))
	require.NoError(t, err)

	second := waitState(t, e.rc, insertJob(t, e.rc, "k000", args, nil), rivertype.JobStateCompleted)
	assert.Equal(t, map[string]int{"k000": 2}, e.perKey(t), "sent anew")
	budget, _, err := e.store.Budget(ctx, river.QueueDefault)
	require.NoError(t, err)
	assert.Zero(t, budget.Held)
	assert.InDelta(t, resultOf(t, first).Generation.BalanceUsed+resultOf(t, second).Generation.BalanceUsed, budget.Spent, 1e-6)
	assert.InDelta(t, before-budget.Spent, e.srv.Balance(), 1e-6, "what was charged is counted")
}

// A job whose key an earlier job used with other arguments is cancelled
// with ErrIdempotencyMismatch without giving back the reservation of the
// key: the earlier job, cancelled while its create was on its way, may
// have been charged, so once its hold lapses its estimate stays spent.
func TestKeyUsedAgainWithOtherArgsKeepsReservation(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	first := client.ImageGenerationArgs{Prompt: "k000 a kite"}
	est := estimate(t, e.srv, first)
	require.NoError(t, e.store.SetBudget(ctx, river.QueueDefault, 10))
	sent := make(chan struct{}, 1)
	lost := client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/generations") && len(sent) == 0 {
			resp, err := next(req) // charged; the answer is lost
			if err == nil {
				resp.Body.Close()
			}
			sent <- struct{}{}
			<-req.Context().Done()
			return nil, req.Context().Err()
		}
		return next(req)
	})
	e.worker(t, 2, e.client(lost, client.WithJournalHold(time.Second)))
	before := e.srv.Balance()
	a := insertJob(t, e.rc, "k000", first, nil)
	<-sent
	_, err := e.rc.JobCancel(ctx, a)
	require.NoError(t, err)
	waitState(t, e.rc, a, rivertype.JobStateCancelled)
	_, err = e.rc.JobDelete(ctx, a)
	require.NoError(t, err)

	b := waitState(t, e.rc, insertJob(t, e.rc, "k000", client.ImageGenerationArgs{Prompt: "k000 a kite in the rain"}, nil), rivertype.JobStateCancelled)
	require.NotEmpty(t, b.Errors)
	assert.Contains(t, b.Errors[len(b.Errors)-1].Error, client.ErrIdempotencyMismatch.Error())
	time.Sleep(1100 * time.Millisecond) // the first job's hold lapses
	_, err = e.store.Reconcile(ctx)
	require.NoError(t, err)
	budget, _, err := e.store.Budget(ctx, river.QueueDefault)
	require.NoError(t, err)
	assert.Zero(t, budget.Held)
	assert.InDelta(t, est, budget.Spent, 1e-6)
	assert.LessOrEqual(t, before-e.srv.Balance(), budget.Spent+1e-9, "what was charged is counted")
}

// A job that finds its key's reservation held by an earlier job that sent
// nothing (cancelled before it recorded the key, then deleted), and whose
// arguments cost more, holds its own estimate: when that does not fit, it
// is cancelled over budget instead of spending past the budget.
func TestKeyUsedAgainHoldsItsOwnEstimate(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	cheap := client.ImageGenerationArgs{Prompt: "k000 a kite"}
	dear := client.ImageGenerationArgs{Prompt: "k000 a kite", FineDetails: true}
	low, high := estimate(t, e.srv, cheap), estimate(t, e.srv, dear)
	require.Greater(t, high, low)
	capUSD := (low + high) / 2
	require.NoError(t, e.store.SetBudget(ctx, river.QueueDefault, capUSD))
	j := stuckClaim{Journal: e.store.Journal(), claiming: make(chan struct{}, 1), stuck: new(atomic.Bool)}
	e.worker(t, 2, e.srv.MustClient(client.WithJournal(j)))
	a := insertJob(t, e.rc, "k000", cheap, nil)
	<-j.claiming
	_, err := e.rc.JobCancel(ctx, a)
	require.NoError(t, err)
	waitState(t, e.rc, a, rivertype.JobStateCancelled)
	_, err = e.rc.JobDelete(ctx, a)
	require.NoError(t, err)

	// Within the 5 s between two runs of Reconcile, which would release it.
	b := waitState(t, e.rc, insertJob(t, e.rc, "k000", dear, nil), rivertype.JobStateCancelled)
	require.NotEmpty(t, b.Errors)
	assert.Contains(t, b.Errors[len(b.Errors)-1].Error, riverjob.ErrOverBudget.Error())
	assert.Empty(t, e.perKey(t))
	_, err = e.store.Reconcile(ctx)
	require.NoError(t, err)
	budget, _, err := e.store.Budget(ctx, river.QueueDefault)
	require.NoError(t, err)
	assert.Zero(t, budget.Held+budget.Spent)
}
