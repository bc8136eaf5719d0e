package riverjob_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/batch"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/pgtest"
	"github.com/mediagen/mediagen-go/internal/proctest"
	riverjob "github.com/mediagen/mediagen-go/river"
	"github.com/mediagen/mediagen-go/webhook"
)

// ProofEnv sets the size of TestProof as "N,K[,S[,R]]": N jobs, K kills,
// the reference server's render scale S (default 0.05), and R jobs enqueued
// a second (default 0: all at once, a burst). The default is a small run
// for CI; BENCHMARKS.md has the figures of MEDIAGEN_RIVER_PROOF=2000,10.
const ProofEnv = "MEDIAGEN_RIVER_PROOF"

// workerEnv makes the test binary a worker process (TestProofWorker).
const workerEnv = "MEDIAGEN_RIVER_PROOF_WORKER"

// proofSlots is each worker process's River MaxWorkers.
const proofSlots = 8

// TestProof runs three worker processes on one PostgreSQL against the
// reference server command with 20% of API requests faulted and a tenth
// of renders failing, N jobs of mixed kinds, and SIGKILLs a random worker K
// times, starting it again each time. Then: no key charged twice, every
// job done or failed with the service's reason, the balance moved by what
// was charged, the budget never exceeded.
func TestProof(t *testing.T) {
	if testing.Short() {
		t.Skip("runs PostgreSQL, the reference server and three workers")
	}
	n, kills, scale, rate := 100, 2, "0.05", 0.0
	if v := os.Getenv(ProofEnv); v != "" {
		f := strings.Split(v, ",")
		_, err := fmt.Sscanf(v, "%d,%d", &n, &kills)
		require.NoError(t, err, "%s=N,K[,render scale[,jobs a second]]", ProofEnv)
		if len(f) > 2 {
			scale = f[2]
		}
		if len(f) > 3 {
			rate, err = strconv.ParseFloat(f[3], 64)
			require.NoError(t, err, "%s=N,K[,render scale[,jobs a second]]", ProofEnv)
		}
	}
	ctx := t.Context()
	dsn := pgtest.DSN(t)
	vars := proctest.RefServer(t, "-addr", "127.0.0.1:0", "-api-key", "proof-key", "-balance", "100000",
		"-render-scale", scale, "-allow-http-webhooks", "-test-control", "-fault-seed", "7",
		"-fault-http", "0.1", "-fault-statuses", "500,502,503,429", "-fault-drop-before", "0.05", "-fault-drop-after", "0.05",
		"-fault-render-error", "0.05", "-fault-render-timeout", "0.05")
	base, control := vars["MEDIAGEN_BASE_URL"], vars["MEDIAGEN_TEST_CONTROL_URL"]

	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	defer pool.Close()
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	require.NoError(t, err)
	_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	require.NoError(t, err)
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	store, err := riverjob.Open(ctx, db, mediagen.PostgreSQL)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, proofRequests+`; `+workLog+`; CREATE TABLE proof_busy (pid bigint PRIMARY KEY, busy bigint NOT NULL)`)
	require.NoError(t, err)
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	waker, err := riverjob.NewWaker(rc, store)
	require.NoError(t, err)
	h, err := webhook.Handler(vars["MEDIAGEN_WEBHOOK_SECRET"], waker.Deliver)
	require.NoError(t, err)
	hook := httptest.NewServer(h)
	defer hook.Close()

	c, err := client.New("proof-key", client.WithBaseURL(base))
	require.NoError(t, err)
	prices, err := c.Pricing(ctx)
	require.NoError(t, err)
	args, estimated := proofArgs(t, prices, n)
	capUSD := estimated // the estimates are maxima: avatars cost less, failures are refunded
	require.NoError(t, store.SetBudget(ctx, river.QueueDefault, capUSD))
	balance0 := proofBalance(t, control)
	faults0 := proofFaults(t, control)

	// Three workers, one killed at random K times and started again.
	saveDir := t.TempDir()
	workers := make([]*exec.Cmd, 3)
	start := func(i int) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProofWorker$", "-test.v=false")
		cmd.Env = append(os.Environ(), workerEnv+"=1", "PROOF_DSN="+dsn, "PROOF_BASE="+base, "PROOF_HOOK="+hook.URL, "PROOF_SAVE="+saveDir)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		require.NoError(t, cmd.Start())
		workers[i] = cmd
	}
	for i := range workers {
		start(i)
	}
	defer func() {
		for _, w := range workers {
			_ = w.Process.Kill()
			_ = w.Wait()
		}
	}()
	began := time.Now()
	params := make([]river.InsertManyParams, n)
	for i, a := range args {
		ja, err := riverjob.NewArgs(fmt.Sprintf("k%05d", i), a)
		require.NoError(t, err)
		params[i] = river.InsertManyParams{Args: ja}
	}
	inserted := make(chan error, 1) // the last insert's error, once every job is in
	go func() { inserted <- proofInsert(ctx, rc, params, rate) }()
	allIn := false

	var (
		mu                         sync.Mutex
		busyPeak, renderPeak, held int
		busySum, samples           int
		hundreds                   busyFigures // while >= 100 renders were in flight
		tailBusy, tailSamples      int         // once every job was sent: only renders left
		tailPeak, tailRendering    int
	)
	killed := 0
	nextKill := time.Now().Add(time.Duration(rand.IntN(3000)) * time.Millisecond)
	deadline := time.Now().Add(time.Duration(n)*150*time.Millisecond + 5*time.Minute)
	lastMove, lastEnded := time.Now(), 0
	for {
		// Whether every job is in, read before the progress: a progress
		// read before the last insert committed must not end the run.
		if !allIn {
			select {
			case err := <-inserted:
				require.NoError(t, err)
				allIn = true
			default:
			}
		}
		p, err := store.Progress(ctx, river.QueueDefault)
		require.NoError(t, err)
		var running int // Work calls running in the live workers
		require.NoError(t, db.QueryRowContext(ctx, `SELECT coalesce(sum(busy), 0) FROM proof_busy`).Scan(&running))
		b, _, err := store.Budget(ctx, river.QueueDefault)
		require.NoError(t, err)
		require.LessOrEqual(t, b.Held+b.Spent, capUSD+1e-6, "reserved within the budget")
		mu.Lock()
		held = max(held, int((b.Held+b.Spent)*100))
		if p.Rendering >= 100 {
			hundreds.add(running, p.Rendering)
		}
		if p.Rendering >= 3*proofSlots*3/2 {
			busyPeak, renderPeak = max(busyPeak, running), max(renderPeak, p.Rendering)
			busySum += running
			samples++
			if p.Queued == 0 && allIn {
				tailBusy += running
				tailSamples++
				tailPeak, tailRendering = max(tailPeak, running), max(tailRendering, p.Rendering)
			}
		}
		mu.Unlock()
		if allIn && p.Queued+p.Rendering == 0 {
			break
		}
		if killed < kills && time.Now().After(nextKill) {
			i := rand.IntN(len(workers))
			require.NoError(t, workers[i].Process.Kill()) // SIGKILL
			_ = workers[i].Wait()
			_, err = db.ExecContext(ctx, `DELETE FROM proof_busy WHERE pid = $1`, workers[i].Process.Pid)
			require.NoError(t, err)
			start(i)
			killed++
			nextKill = time.Now().Add(time.Duration(2000+rand.IntN(4000)) * time.Millisecond)
		}
		if p.Done+p.Failed != lastEnded {
			lastMove, lastEnded = time.Now(), p.Done+p.Failed
		}
		require.Truef(t, time.Now().Before(deadline) && time.Since(lastMove) < 2*time.Minute, "jobs left: %+v", p)
		time.Sleep(100 * time.Millisecond)
	}
	elapsed := time.Since(began)
	faults1 := proofFaults(t, control)

	// Figures.
	jobs, err := rc.JobList(ctx, river.NewJobListParams().First(10000).States(
		rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded))
	require.NoError(t, err)
	require.Len(t, jobs.Jobs, n)
	done, failed, charged := 0, 0, 0.0
	reasons := map[string]int{}
	for _, j := range jobs.Jobs {
		switch j.State {
		case rivertype.JobStateCompleted:
			var r riverjob.Result
			require.NoError(t, json.Unmarshal(j.Output(), &r))
			charged += r.Generation.BalanceUsed
			done++
		default:
			failed++
			msg := j.Errors[len(j.Errors)-1].Error
			switch {
			case strings.Contains(msg, "ended with status error"), strings.Contains(msg, "ended with status timeout"):
				reasons["render failed (service)"]++
			default:
				reasons[msg]++
			}
		}
	}
	perKey := map[string]int{}
	for g, err := range c.Generations(ctx, client.ListParams{Limit: 100}) {
		require.NoError(t, err)
		text, _ := g.Params["prompt"].(string)
		if text == "" {
			text, _ = g.Params["script"].(string)
		}
		perKey[strings.Fields(text)[0]]++
	}
	twice := 0
	for _, c := range perKey {
		if c > 1 {
			twice++
		}
	}
	b, _, err := store.Budget(ctx, river.QueueDefault)
	require.NoError(t, err)
	moved := balance0 - proofBalance(t, control)
	mode := "all enqueued at once"
	if rate > 0 {
		mode = fmt.Sprintf("enqueued at %g a second", rate)
	}
	t.Logf("jobs: %d (%s), render scale %s, kills: %d, %s (%.1f jobs/s)", n, mode, scale, killed, elapsed.Round(time.Second), float64(n)/elapsed.Seconds())
	t.Logf("generations: %d for %d keys; keys charged twice: %d", len(perKey), n, twice)
	t.Logf("jobs done: %d, failed: %d %v", done, failed, reasons)
	t.Logf("budget: cap $%.4f, peak reserved+spent $%.2f, spent $%.4f, held at the end $%.4f; charged by the jobs $%.4f; balance moved $%.4f",
		capUSD, float64(held)/100, b.Spent, b.Held, charged, moved)
	t.Logf("slots: %d over 3 workers; while >= %d renders were in flight (at most %d): %.2f busy on average, %d at most",
		3*proofSlots, 3*proofSlots*3/2, renderPeak, float64(busySum)/float64(max(samples, 1)), busyPeak)
	t.Logf("slots while >= 100 renders were in flight (at most %d): %.2f busy on average, %d at most, %d samples (every 100 ms)",
		hundreds.rendering, hundreds.mean(), hundreds.peak, hundreds.samples)
	t.Logf("slots once every job was sent, with up to %d renders in flight: %.2f busy on average, %d at most",
		tailRendering, float64(tailBusy)/float64(max(tailSamples, 1)), tailPeak)
	t.Logf("Work calls (kind, result):")
	workFigures(t, db)
	t.Logf("requests by the workers (route, cause, outcome):")
	attempts, served := requestFigures(t, db, len(perKey), faults0, faults1)
	t.Logf("per generation: %.3f HTTP attempts at the API (faulted ones included), %.3f API requests served by the service", attempts, served)

	assert.Zero(t, twice, "no key charged twice")
	assert.Equal(t, n, done+failed)
	assert.Equal(t, failed, reasons["render failed (service)"], "every failure is the service's: %v", reasons)
	assert.InDelta(t, charged, moved, 1e-6, "the balance moved by what the jobs were charged")
	assert.InDelta(t, charged, b.Spent, 1e-6)
	assert.Zero(t, b.Held)

	if os.Getenv(ProofEnv) != "" {
		compareBatch(t, base, control, args, 3*proofSlots, elapsed)
	}
}

// proofInsert enqueues the jobs of params: all at once when rate is 0,
// else rate a second, a tenth of a second's worth at a time.
func proofInsert(ctx context.Context, rc *river.Client[pgx.Tx], params []river.InsertManyParams, rate float64) error {
	if rate <= 0 {
		_, err := rc.InsertMany(ctx, params)
		return err
	}
	began := time.Now()
	for i := 0; i < len(params); {
		due := min(len(params), int(time.Since(began).Seconds()*rate)+1)
		if due > i {
			if _, err := rc.InsertMany(ctx, params[i:due]); err != nil {
				return err
			}
			i = due
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// busyFigures are samples of the busy slots.
type busyFigures struct {
	sum, peak, samples, rendering int
}

func (b *busyFigures) add(busy, rendering int) {
	b.sum += busy
	b.peak = max(b.peak, busy)
	b.rendering = max(b.rendering, rendering)
	b.samples++
}

func (b *busyFigures) mean() float64 { return float64(b.sum) / float64(max(b.samples, 1)) }

// compareBatch runs the same generations through batch.Run in one process
// at the same concurrency, and logs both throughputs.
func compareBatch(t *testing.T, base, control string, args []client.Args, concurrency int, river time.Duration) {
	c, err := client.New("proof-key", client.WithBaseURL(base))
	require.NoError(t, err)
	items := make([]batch.Item, len(args))
	for i, a := range args {
		items[i] = batch.Item{Key: fmt.Sprintf("batch-%05d", i), Args: a}
	}
	began := time.Now()
	res, err := batch.Run(t.Context(), c, items, batch.WithConcurrency(concurrency), batch.WithSaveTo(t.TempDir()))
	require.NoError(t, err)
	took := time.Since(began)
	t.Logf("batch.Run, concurrency %d, same faults: %d done, %d failed in %s (%.1f jobs/s); River: %.1f jobs/s",
		concurrency, res.Done, res.Failed, took.Round(time.Second), float64(len(items))/took.Seconds(), float64(len(items))/river.Seconds())
}

// TestProofWorker is a worker process of TestProof; it runs only there.
func TestProofWorker(t *testing.T) {
	if os.Getenv(workerEnv) == "" {
		t.Skip("a worker process of TestProof")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("PROOF_DSN"))
	require.NoError(t, err)
	db := stdlib.OpenDBFromPool(pool)
	store, err := riverjob.Open(ctx, db, mediagen.PostgreSQL)
	require.NoError(t, err)
	count := countRequests(db)
	c, err := client.New("proof-key", client.WithBaseURL(os.Getenv("PROOF_BASE")), client.WithJournal(store.Journal()),
		client.WithJournalHold(5*time.Second), client.WithRetryWait(50*time.Millisecond, time.Second), count)
	require.NoError(t, err)
	w, err := riverjob.NewWorker(c, store, riverjob.WithWebhookURL(os.Getenv("PROOF_HOOK")),
		riverjob.WithSaveTo(os.Getenv("PROOF_SAVE")), riverjob.WithTimeout(15*time.Second))
	require.NoError(t, err)
	var busy, peak atomic.Int64
	go func() { // the busy slots, for TestProof to sample
		for range time.Tick(20 * time.Millisecond) {
			_, _ = db.ExecContext(ctx, `INSERT INTO proof_busy (pid, busy) VALUES ($1, $2)
				ON CONFLICT (pid) DO UPDATE SET busy = excluded.busy`, os.Getpid(), busy.Load())
		}
	}()
	workers := river.NewWorkers()
	river.AddWorker[riverjob.Args](workers, timed{counting{Worker: w, busy: &busy, peak: &peak}, db})
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: proofSlots}},
		Workers:              workers,
		FetchPollInterval:    100 * time.Millisecond,
		JobTimeout:           15 * time.Second,
		RescueStuckJobsAfter: 20 * time.Second,
		MaxAttempts:          100,
		Logger:               slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	require.NoError(t, err)
	require.NoError(t, rc.Start(ctx))
	select {} // until killed
}

// proofArgs returns n generations of mixed kinds, each text starting with
// its key, and the sum of their estimated maxima.
func proofArgs(t *testing.T, prices client.Pricing, n int) ([]client.Args, float64) {
	args := make([]client.Args, n)
	sum := 0.0
	for i := range args {
		text := fmt.Sprintf("k%05d a lighthouse at dusk", i)
		switch i % 4 {
		case 0, 1:
			args[i] = client.ImageGenerationArgs{Prompt: text}
		case 2:
			args[i] = client.VoiceoverArgs{VoiceID: "ava-warm-narrator", Script: text}
		default:
			args[i] = client.AvatarArgs{VoiceID: "ava-warm-narrator", Script: text, PermissionConfirmed: true}
		}
		est, err := prices.Estimate(args[i])
		require.NoError(t, err)
		sum += est.Max
	}
	return args, sum
}

// proofControl reads path of the test-control API into out.
func proofControl(t *testing.T, control, path string, out any) {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, control+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "proof-key")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
}

// proofBalance reads the project's balance through the test-control API.
func proofBalance(t *testing.T, control string) float64 {
	var body struct {
		Balance json.Number `json:"balance"`
	}
	proofControl(t, control, "/balance", &body)
	v, err := strconv.ParseFloat(body.Balance.String(), 64)
	require.NoError(t, err)
	return v
}
