package riverjob_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/testlog"
	riverjob "github.com/mediagen/mediagen-go/river"
)

// Jobs of mixed kinds complete with their outputs saved, each key charged
// once, the budget settled to what was charged, and, with webhooks, about
// one request per generation: the create; the event ends the wait.
func TestJobsCompleteWithWebhooks(t *testing.T) {
	e := newEnv(t)
	const n = 30
	require.NoError(t, e.store.SetBudget(t.Context(), river.QueueDefault, 1000))
	dir := t.TempDir()
	var api atomic.Int64 // requests to the API, not to storage
	count := client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if strings.HasPrefix(req.URL.Path, "/v3/") {
			api.Add(1)
		}
		return next(req)
	})
	e.worker(t, 4, e.client(count), riverjob.WithSaveTo(dir), riverjob.WithWebhookURL(e.hook))
	before := e.srv.Balance()
	e.insert(t, mixed(n))
	jobs := e.waitJobs(t, time.Minute)
	require.Len(t, jobs[rivertype.JobStateCompleted], n, "jobs: %v", jobs)

	spent := 0.0
	for _, j := range jobs[rivertype.JobStateCompleted] {
		var res riverjob.Result
		require.NoError(t, json.Unmarshal(j.Output(), &res))
		assert.Equal(t, mediagen.GenerationStatusDone, res.Generation.Status)
		assert.FileExists(t, res.Path)
		assert.Equal(t, dir, filepath.Dir(res.Path))
		spent += res.Generation.BalanceUsed
	}
	for k, c := range e.perKey(t) {
		assert.Equalf(t, 1, c, "generations of %s", k)
	}
	b, ok, err := e.store.Budget(t.Context(), river.QueueDefault)
	require.NoError(t, err)
	require.True(t, ok)
	assert.InDelta(t, spent, b.Spent, 1e-6)
	assert.Zero(t, b.Held)
	assert.InDelta(t, before-spent, e.srv.Balance(), 1e-6, "the balance moved by what was charged")
	reqs := float64(api.Load()) / n
	t.Logf("%.2f requests per generation (pricing included)", reqs)
	assert.LessOrEqual(t, reqs, 1.2)
}

// A worker killed while its jobs are in flight loses nothing: another
// worker resumes them without charging any key twice, also when the kill
// came between sending a create and recording its generation.
func TestKilledWorkerResumesWithoutSecondCharge(t *testing.T) {
	e := newEnv(t, clienttest.WithRenderScale(0.1))
	const n = 24
	var creates atomic.Int64
	var kill func()
	killed := make(chan struct{})
	dieAfterSend := client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/generations") && creates.Add(1) == 10 {
			// Sent and charged: the machine dies before the worker learns the id.
			resp.Body.Close()
			go func() { kill(); close(killed) }()
			<-req.Context().Done()
			return nil, req.Context().Err()
		}
		return resp, err
	})
	kill = e.worker(t, 4, e.client(dieAfterSend, client.WithJournalHold(2*time.Second)))
	e.insert(t, mixed(n))
	select {
	case <-killed:
	case <-time.After(30 * time.Second):
		t.Fatal("the worker was not killed")
	}

	e.worker(t, 4, e.client(client.WithJournalHold(2*time.Second)))
	jobs := e.waitJobs(t, 90*time.Second)
	assert.Len(t, jobs[rivertype.JobStateCompleted], n)
	counts := e.perKey(t)
	assert.Len(t, counts, n)
	for k, c := range counts {
		assert.Equalf(t, 1, c, "generations of %s", k)
	}
}

// Worker slots are free while renders run: with many long renders in
// flight, the jobs snooze and hardly any slot is busy.
func TestSlotsFreeWhileRendering(t *testing.T) {
	e := newEnv(t, clienttest.WithRenderScale(0.1))
	const slots, n = 4, 30
	e.worker(t, slots, e.client())
	args := make([]client.Args, n)
	for i := range args {
		args[i] = client.AvatarArgs{VoiceID: "ava-warm-narrator", Script: "k" + strings.Repeat("long script ", 20), PermissionConfirmed: true}
	}
	e.insert(t, args)
	var peakRendering, samples int
	var busySum, busyPeak int64
	deadline := time.Now().Add(90 * time.Second)
	for {
		p, err := e.store.Progress(t.Context(), river.QueueDefault)
		require.NoError(t, err)
		if p.Rendering >= n/2 {
			peakRendering = max(peakRendering, p.Rendering)
			b := e.busy.Load()
			busySum += b
			busyPeak = max(busyPeak, b)
			samples++
		}
		if p.Queued+p.Rendering == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "%+v", p)
		time.Sleep(5 * time.Millisecond)
	}
	mean := float64(busySum) / float64(max(samples, 1))
	t.Logf("%d renders in flight at most; meanwhile %.2f of %d slots busy on average, %d at most", peakRendering, mean, slots, busyPeak)
	assert.Greater(t, peakRendering, slots, "more renders in flight than slots")
	assert.Less(t, mean, float64(slots)/4, "slots are free while renders run")
}

// The budget holds across several workers: the jobs that fit are done,
// the others cancelled with ErrOverBudget, and the spent amount never
// passes the cap.
func TestBudgetSharedByWorkers(t *testing.T) {
	e := newEnv(t)
	const n = 30
	args := make([]client.Args, n)
	for i := range args {
		args[i] = client.ImageGenerationArgs{Prompt: "k a kite"}
	}
	p, err := e.srv.MustClient().Pricing(t.Context())
	require.NoError(t, err)
	est, err := p.Estimate(args[0])
	require.NoError(t, err)
	capUSD := est.Max * 10.5
	require.NoError(t, e.store.SetBudget(t.Context(), river.QueueDefault, capUSD))
	before := e.srv.Balance()
	for range 3 {
		e.worker(t, 3, e.client())
	}
	e.insert(t, args)
	jobs := e.waitJobs(t, time.Minute)
	assert.Len(t, jobs[rivertype.JobStateCompleted], 10)
	require.Len(t, jobs[rivertype.JobStateCancelled], n-10)
	assert.Contains(t, jobs[rivertype.JobStateCancelled][0].Errors[0].Error, riverjob.ErrOverBudget.Error())
	b, _, err := e.store.Budget(t.Context(), river.QueueDefault)
	require.NoError(t, err)
	assert.LessOrEqual(t, b.Spent, capUSD)
	assert.Zero(t, b.Held)
	assert.InDelta(t, before-b.Spent, e.srv.Balance(), 1e-6)
}

// A render that fails is refunded, and its job is cancelled with the
// service's reason on its first attempt: River does not send it again.
func TestFailedRenderIsAVisibleJobError(t *testing.T) {
	e := newEnv(t, clienttest.WithOutcome(func(mediagen.Feature) clienttest.Outcome { return clienttest.OutcomeError }))
	require.NoError(t, e.store.SetBudget(t.Context(), river.QueueDefault, 10))
	e.worker(t, 2, e.client(), riverjob.WithWebhookURL(e.hook))
	before := e.srv.Balance()
	e.insert(t, mixed(3))
	jobs := e.waitJobs(t, time.Minute)
	require.Len(t, jobs[rivertype.JobStateCancelled], 3)
	for _, j := range jobs[rivertype.JobStateCancelled] {
		assert.Equal(t, 1, j.Attempt)
		require.Len(t, j.Errors, 1)
		assert.Contains(t, j.Errors[0].Error, "error")
	}
	assert.Len(t, e.perKey(t), 3)
	assert.InDelta(t, before, e.srv.Balance(), 1e-6, "refunded")
	b, _, err := e.store.Budget(t.Context(), river.QueueDefault)
	require.NoError(t, err)
	assert.Zero(t, b.Held+b.Spent)
}

// A call the service refuses is cancelled at once, and its reservation
// released.
func TestRefusedCallIsCancelled(t *testing.T) {
	e := newEnv(t)
	e.worker(t, 1, e.client())
	ja := riverjob.Args{Key: "bad", Feature: "video/avatar", Args: json.RawMessage(`{"voiceId":"nobody","script":"hi"}`)}
	_, err := e.rc.Insert(t.Context(), ja, nil)
	require.NoError(t, err)
	jobs := e.waitJobs(t, 30*time.Second)
	require.Len(t, jobs[rivertype.JobStateCancelled], 1)
	assert.NotEmpty(t, jobs[rivertype.JobStateCancelled][0].Errors)
}

// A key of the form of a job's default key ("job-<digits>") is refused,
// by NewArgs and by the worker before anything is sent: it would share
// the other job's generation and charge.
func TestDefaultKeyFormRefused(t *testing.T) {
	args := client.ImageGenerationArgs{Prompt: "r1 a lighthouse"}
	_, err := riverjob.NewArgs("job-12", args)
	require.ErrorIs(t, err, client.ErrInvalidArgument)
	assert.ErrorContains(t, err, `"job-12" has the form of a job's default key`)
	for _, ok := range []string{"job-", "job-12a", "jobs-12", "order-12"} {
		_, err := riverjob.NewArgs(ok, args)
		assert.NoError(t, err, ok)
	}

	e := newEnv(t)
	e.worker(t, 1, e.client())
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	_, err = e.rc.Insert(t.Context(), riverjob.Args{Key: "job-999999", Feature: args.Feature(), Args: raw}, nil)
	require.NoError(t, err)
	jobs := e.waitJobs(t, 30*time.Second)
	require.Len(t, jobs[rivertype.JobStateCancelled], 1)
	errs := jobs[rivertype.JobStateCancelled][0].Errors
	require.NotEmpty(t, errs)
	assert.Contains(t, errs[len(errs)-1].Error, "default key")
	assert.Empty(t, e.perKey(t), "nothing was sent")
}

// Inserting the same keyed jobs again adds none.
func TestInsertUniqueByKey(t *testing.T) {
	e := newEnv(t)
	e.insert(t, mixed(5))
	e.insert(t, mixed(5))
	res, err := e.rc.JobList(t.Context(), river.NewJobListParams().First(100))
	require.NoError(t, err)
	assert.Len(t, res.Jobs, 5)
}

// A job run again after it completed (a wake racing its completion)
// completes with the same result, without a request or a second download.
func TestCompletedJobRunAgainSavesNothingAgain(t *testing.T) {
	e := newEnv(t)
	var requests atomic.Int64
	count := client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		requests.Add(1)
		return next(req)
	})
	e.worker(t, 2, e.client(count), riverjob.WithSaveTo(t.TempDir()), riverjob.WithWebhookURL(e.hook))
	e.insert(t, mixed(1))
	jobs := e.waitJobs(t, 30*time.Second)
	require.Len(t, jobs[rivertype.JobStateCompleted], 1)
	first := jobs[rivertype.JobStateCompleted][0]
	sent := requests.Load()

	_, err := e.rc.JobRetry(t.Context(), first.ID)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		j, err := e.rc.JobGet(t.Context(), first.ID)
		return err == nil && j.State == rivertype.JobStateCompleted && j.Attempt > first.Attempt
	}, 30*time.Second, 20*time.Millisecond)
	again, err := e.rc.JobGet(t.Context(), first.ID)
	require.NoError(t, err)
	assert.JSONEq(t, string(first.Output()), string(again.Output()))
	assert.Equal(t, sent, requests.Load(), "no request, no download")
}

// A worker reads the price list again once it is pricesFresh old: a job
// estimated on the old prices, lower than the service's new ones, could
// spend past the budget.
func TestWorkerEstimatesOnFreshPrices(t *testing.T) {
	defer riverjob.SetPricesFresh(riverjob.SetPricesFresh(0))
	e := newEnv(t)
	var factor atomic.Int64 // the service's prices, times this
	factor.Store(1)
	raise := client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		if err != nil || req.URL.Path != "/v3/pricing" || resp.StatusCode != http.StatusOK {
			return resp, err
		}
		var body struct {
			Prices map[string]map[string]any `json:"prices"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		for _, p := range body.Prices {
			p["price"] = p["price"].(float64) * float64(factor.Load())
		}
		b, _ := json.Marshal(body)
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		resp.Header.Del("Content-Length")
		return resp, nil
	})
	args := client.ImageGenerationArgs{Prompt: "k a kite"}
	p, err := e.srv.MustClient().Pricing(t.Context())
	require.NoError(t, err)
	est, err := p.Estimate(args)
	require.NoError(t, err)
	require.NoError(t, e.store.SetBudget(t.Context(), river.QueueDefault, est.Max*3))
	e.worker(t, 1, e.client(raise))

	e.insert(t, []client.Args{args})
	jobs := e.waitJobs(t, time.Minute)
	require.Len(t, jobs[rivertype.JobStateCompleted], 1, "jobs: %v", jobs)

	factor.Store(10) // the service raises its prices
	ja, err := riverjob.NewArgs("k-later", client.ImageGenerationArgs{Prompt: "k another kite"})
	require.NoError(t, err)
	_, err = e.rc.Insert(t.Context(), ja, nil)
	require.NoError(t, err)
	jobs = e.waitJobs(t, time.Minute)
	require.Len(t, jobs[rivertype.JobStateCancelled], 1, "jobs: %v", jobs)
	cancelled := jobs[rivertype.JobStateCancelled][0]
	assert.Contains(t, cancelled.Errors[len(cancelled.Errors)-1].Error, riverjob.ErrOverBudget.Error(), "estimated at the new prices")
}

// WithLogger is where a worker logs what it works around: here, a price
// list it could not read again, estimating on the last one.
func TestWorkerLogsToItsLogger(t *testing.T) {
	defer riverjob.SetPricesFresh(riverjob.SetPricesFresh(0))
	e := newEnv(t)
	_, err := riverjob.NewWorker(e.client(), e.store, riverjob.WithLogger(nil))
	require.ErrorContains(t, err, "nil logger")

	var failPricing atomic.Bool
	refuse := client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if req.URL.Path != "/v3/pricing" || !failPricing.Load() {
			return next(req)
		}
		body := `{"error":{"code":"invalid_request","message":"no prices today"}}`
		return &http.Response{StatusCode: http.StatusBadRequest, Request: req,
			Header: http.Header{"Content-Type": {"application/json"}},
			Body:   io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}, nil
	})
	logger, logged := testlog.DebugTextLogger()
	e.worker(t, 1, e.client(refuse), riverjob.WithLogger(logger))
	e.insert(t, []client.Args{client.ImageGenerationArgs{Prompt: "k0 a kite"}})
	jobs := e.waitJobs(t, time.Minute)
	require.Len(t, jobs[rivertype.JobStateCompleted], 1, "jobs: %v", jobs)
	require.NotContains(t, logged.String(), "price list")

	failPricing.Store(true)
	ja, err := riverjob.NewArgs("k1", client.ImageGenerationArgs{Prompt: "k1 another kite"})
	require.NoError(t, err)
	_, err = e.rc.Insert(t.Context(), ja, nil)
	require.NoError(t, err)
	jobs = e.waitJobs(t, time.Minute)
	require.Len(t, jobs[rivertype.JobStateCompleted], 2, "estimated on the last list: jobs %v", jobs)
	assert.Contains(t, logged.String(), "reading the price list failed; estimating on the last one")
	assert.Contains(t, logged.String(), "no prices today")
}

// A budget too large for the store's millionths of USD (math.MaxFloat64,
// for no limit) is no limit, on PostgreSQL and SQLite; it overflowed to a
// negative cap that cancelled every job as over budget.
func TestHugeBudgetIsNoLimit(t *testing.T) {
	args, err := riverjob.NewArgs("huge", client.ImageGenerationArgs{Prompt: "huge a kite"})
	require.NoError(t, err)
	check := func(t *testing.T, store *riverjob.Store, state func() rivertype.JobState) {
		require.Eventually(t, func() bool {
			return state() != rivertype.JobStateAvailable && state() != rivertype.JobStateRunning &&
				state() != rivertype.JobStateScheduled && state() != rivertype.JobStateRetryable
		}, 30*time.Second, 50*time.Millisecond)
		assert.Equal(t, rivertype.JobStateCompleted, state())
		b, ok, err := store.Budget(t.Context(), river.QueueDefault)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Greater(t, b.Cap, 1e12)
		assert.Positive(t, b.Spent)
	}
	t.Run("PostgreSQL", func(t *testing.T) {
		e := newEnv(t)
		require.NoError(t, e.store.SetBudget(t.Context(), river.QueueDefault, math.MaxFloat64))
		e.worker(t, 1, e.client())
		ins, err := e.rc.Insert(t.Context(), args, nil)
		require.NoError(t, err)
		check(t, e.store, func() rivertype.JobState {
			j, err := e.rc.JobGet(t.Context(), ins.Job.ID)
			require.NoError(t, err)
			return j.State
		})
	})
	t.Run("SQLite", func(t *testing.T) {
		srv := clienttest.NewServer(t, clienttest.WithWallClock())
		db := openSQLite(t, filepath.Join(t.TempDir(), "queue.db"))
		store, err := riverjob.Open(t.Context(), db, mediagen.SQLite)
		require.NoError(t, err)
		require.NoError(t, store.SetBudget(t.Context(), river.QueueDefault, math.MaxFloat64))
		rc := workSQLite(t, db, store, srv)
		ins, err := rc.Insert(t.Context(), args, nil)
		require.NoError(t, err)
		check(t, store, func() rivertype.JobState {
			j, err := rc.JobGet(t.Context(), ins.Job.ID)
			require.NoError(t, err)
			return j.State
		})
	})
}
