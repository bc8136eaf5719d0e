package riverjob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/poll"
)

// ErrOverBudget is the error of a job cancelled because its estimated cost
// does not fit what is left of its queue's budget (Store.SetBudget).
var ErrOverBudget = errors.New("riverjob: over the queue's budget")

// errNotHeld fails the send of an attempt whose reservation was reserved
// again (River rescued the job while the attempt ran) or ended meanwhile.
var errNotHeld = errors.New("riverjob: the key's reservation is no longer this attempt's; nothing sent")

// DefaultTimeout is how long one attempt of a job may run: a submit, or a
// check, and the saving of the outputs.
const DefaultTimeout = 5 * time.Minute

// Worker works generation jobs (Args): it submits, snoozes while the
// service renders, and saves the outputs once done. Register it with
// river.AddWorker; one Worker serves every job of a process.
//
// A job charges once, whatever River runs again: the submit goes out with
// an idempotency key recorded in the store's journal, so an attempt after a
// crash, a timeout or a killed worker finds the generation and waits on it.
// No worker slot is held while a render runs: the job snoozes
// (river.JobSnooze) by the kind's polling schedule, or, when webhook events
// end the waits (WithWebhookURL and a Waker), until a render of the kind is
// normally over and then for poll.BackstopInterval; each later attempt
// checks once. A render that ends in error or timeout was refunded: the job
// is cancelled with a *poll.FailedError, which River shows as the job's
// error and does not retry; so is a call the service refused.
//
// Before a submit, at most every 5 seconds, a worker ends the reservations
// of jobs River finished without settling them (Store.Reconcile), and once
// an hour deletes the rows of jobs that ended over journal.Retention ago.
type Worker struct {
	river.WorkerDefaults[Args]

	c       *client.Client
	store   *Store
	saveTo  string
	webhook string
	timeout time.Duration
	logger  *slog.Logger

	mu      sync.Mutex
	pricing client.Pricing
	priced  time.Time // when pricing was read

	nextSweep, nextCleanup atomic.Int64 // unix nanoseconds; see sweep
}

// NewWorker returns a worker that sends through c and keeps its state in
// store. c must have been made with client.WithJournal(store.Journal()),
// or with a journal that wraps it and says so with a method
// Unwrap() journal.Journal; otherwise NewWorker fails: with another
// journal a job run again after a crash may charge twice, and the budget
// could not tell what was sent.
func NewWorker(c *client.Client, store *Store, opts ...Option) (*Worker, error) {
	if c == nil || store == nil {
		return nil, errors.New("riverjob: NewWorker needs a client and a store")
	}
	if !recordsIn(c.Journal(), store.Journal()) {
		return nil, errors.New("riverjob: the client does not record its keys in the store's journal: make it with client.WithJournal(store.Journal())")
	}
	w := &Worker{c: c, store: store, timeout: DefaultTimeout, logger: slog.Default()}
	var errs []error
	for _, o := range opts {
		if o != nil {
			errs = append(errs, o(w))
		}
	}
	return w, errors.Join(errs...)
}

// recordsIn reports whether j is want, or wraps it.
func recordsIn(j journal.Journal, want *journal.SQL) bool {
	for {
		if s, ok := j.(*journal.SQL); ok {
			return s == want
		}
		u, ok := j.(interface{ Unwrap() journal.Journal })
		if !ok {
			return false
		}
		j = u.Unwrap()
	}
}

// Timeout returns how long one attempt may run.
func (w *Worker) Timeout(*river.Job[Args]) time.Duration { return w.timeout }

// Work submits the job's generation or checks on it; see Worker.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	key := job.Args.key(job.ID)
	args, err := job.Args.raw()
	if err != nil {
		return river.JobCancel(err)
	}
	rec, err := w.store.journal.Get(ctx, key)
	if errors.Is(err, journal.ErrNotFound) && key != defaultKey(job.ID) && reserved(key) {
		return river.JobCancel(fmt.Errorf("riverjob: key %q has the form of a job's default key: %w", key, client.ErrInvalidArgument))
	}
	ctx = attemptContext(ctx, job.Metadata, rec.Trace)
	kind := client.KindOf(args.FeatureName)
	var g *mediagen.Generation
	var res *Result
	switch {
	case err == nil && rec.ID != "":
		g, res, err = w.check(ctx, key, rec, kind, job.ID)
	case err == nil || errors.Is(err, journal.ErrNotFound):
		g, res, err = w.submit(ctx, job, key, args, err == nil)
	}
	if err != nil {
		return err
	}
	if res != nil { // a run of the job completed already: the outputs are saved
		return river.RecordOutput(ctx, *res)
	}
	switch g.Status {
	case mediagen.GenerationStatusDone:
		return w.finish(ctx, job, key, g)
	case mediagen.GenerationStatusError, mediagen.GenerationStatusTimeout:
		if err := w.store.settle(ctx, key, "released", 0); err != nil {
			return err
		}
		w.c.Observed(ctx, g) // the generation's job ends with its status
		return river.JobCancel(&poll.FailedError{Generation: g})
	}
	w.c.Release(g.ID) // a later attempt, on any worker, continues its trace
	return river.JobSnooze(w.interval(kind, rec.Created))
}

// submit reserves the estimate and sends the generation with key, or finds
// the one a previous attempt sent; recorded is whether the journal has a
// record of key.
func (w *Worker) submit(ctx context.Context, job *river.Job[Args], key string, args client.RawArgs, recorded bool) (*mediagen.Generation, *Result, error) {
	est, err := w.estimate(ctx, args)
	if err != nil {
		return nil, nil, err
	}
	w.sweep(ctx)
	fence, ok, others, err := w.store.reserve(ctx, job.Queue, key, job.ID, est, recorded)
	switch {
	case err != nil:
		return nil, nil, err
	case !ok && others: // held reservations may be released or settle lower
		return nil, nil, river.JobSnooze(jitter(5 * time.Second))
	case !ok:
		return nil, nil, river.JobCancel(fmt.Errorf("%w: %s estimated at $%.4f", ErrOverBudget, key, est))
	}
	opts := []client.Option{client.WithIdempotencyKey(key)}
	if fence != 0 { // sent only while the reservation is this attempt's
		opts = append(opts, client.WithMiddleware(w.owned(key, &fence)))
	}
	if w.webhook != "" {
		opts = append(opts, client.WithWebhookURL(w.webhook))
	}
	g, err := w.c.CreateGeneration(ctx, args, opts...)
	var unsure *client.UncertainError
	switch {
	case err == nil:
	case ctx.Err() != nil || errors.As(err, &unsure):
		return nil, nil, err // may have been charged: the reservation stays, the journal finds it
	case errors.Is(err, client.ErrIdempotencyMismatch):
		// Nothing was sent, but the reservation may be an earlier job's of
		// the key, which may have been charged: Reconcile ends it.
		return nil, nil, river.JobCancel(err)
	case refused(err):
		if rerr := w.store.release(ctx, key, fence); rerr != nil {
			return nil, nil, rerr
		}
		return nil, nil, river.JobCancel(err)
	default: // nothing was charged; River tries again later
		if rerr := w.store.release(ctx, key, fence); rerr != nil {
			return nil, nil, rerr
		}
		return nil, nil, err
	}
	return w.remember(ctx, g, job.ID)
}

// owned is the middleware of a submit that holds key's reservation at
// version *fence: each create goes out only once Store.own moved it on.
func (w *Worker) owned(key string, fence *int64) client.Middleware {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if req.Method != http.MethodPost {
			return next(req)
		}
		ok, err := w.store.own(req.Context(), key, *fence)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			return nil, errNotHeld
		}
		*fence++
		return next(req)
	}
}

// check reads the generation of rec once: from the webhook event a Waker
// stored, or from the service. With webhooks, the service is asked only
// once a render of kind is normally over (a job run early, such as one
// rescued from a dead worker, snoozes until then: its event wakes it).
func (w *Worker) check(ctx context.Context, key string, rec journal.Record, kind mediagen.Kind, job int64) (*mediagen.Generation, *Result, error) {
	id := rec.ID
	g, res, err := w.remember(ctx, &mediagen.Generation{ID: id}, job)
	if err != nil || res != nil || g.Terminal() || w.webhook != "" && early(kind, rec.Created) {
		return g, res, err
	}
	g, err = w.c.GetGeneration(ctx, id)
	if errors.Is(err, client.ErrNotFound) { // expired or deleted: charged, unless its event says refunded
		if gerr := w.store.gone(ctx, key, id); gerr != nil {
			return nil, nil, gerr
		}
		return nil, nil, river.JobCancel(fmt.Errorf("riverjob: generation %s of %s: %w", id, key, poll.ErrGone))
	}
	return g, nil, err
}

// remember records that job waits on g and returns the generation of the
// terminal event a Waker stored for it, or g when none arrived, and the
// result of a run of the job that completed already.
func (w *Worker) remember(ctx context.Context, g *mediagen.Generation, job int64) (*mediagen.Generation, *Result, error) {
	body, result, err := w.store.submitted(ctx, g.ID, job)
	if err != nil {
		return nil, nil, err
	}
	if result != nil {
		var res Result
		if err := json.Unmarshal(result, &res); err != nil {
			return nil, nil, fmt.Errorf("riverjob: stored result of %s: %w", g.ID, err)
		}
		return g, &res, nil
	}
	if body == nil {
		return g, nil, nil
	}
	var ended mediagen.Generation
	if err := json.Unmarshal(body, &ended); err != nil {
		return nil, nil, fmt.Errorf("riverjob: stored event of %s: %w", g.ID, err)
	}
	return &ended, nil, nil
}

// finish saves the outputs, settles the budget and records the result.
func (w *Worker) finish(ctx context.Context, job *river.Job[Args], key string, g *mediagen.Generation) error {
	res := Result{Key: key, Generation: g}
	dir := job.Args.SaveTo
	if dir == "" {
		dir = w.saveTo
	}
	if dir != "" {
		saved, err := w.c.SaveOutput(ctx, g, dir, client.WithIdempotencyKey(key))
		if err != nil {
			return err // River tries again; the next attempt finds g done
		}
		res.Path, res.PosterPath = saved.Path, saved.PosterPath
	}
	if err := w.store.settle(ctx, key, "settled", g.BalanceUsed); err != nil {
		return err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if err := w.store.finished(ctx, g.ID, b); err != nil {
		return err
	}
	w.c.Observed(ctx, g) // the generation's job ends with its status, once
	return river.RecordOutput(ctx, res)
}

// How often a worker runs Store.Reconcile and deletes old rows.
const (
	sweepEvery   = 5 * time.Second
	cleanupEvery = time.Hour
)

// sweep runs Store.Reconcile, and the cleanup, when due. A failure only
// logs: the next sweep tries again.
func (w *Worker) sweep(ctx context.Context) {
	if !due(&w.nextSweep, sweepEvery) {
		return
	}
	if _, err := w.store.Reconcile(ctx); err != nil {
		w.logger.WarnContext(ctx, "riverjob: ending the reservations of finished jobs failed", "err", err)
	}
	if due(&w.nextCleanup, cleanupEvery) {
		if err := w.store.cleanup(ctx, time.Now().Add(-journal.Retention)); err != nil {
			w.logger.WarnContext(ctx, "riverjob: deleting old rows failed", "err", err)
		}
	}
}

// due reports whether the time in next (unix nanoseconds) has come, and
// then moves it on by every, for one caller only.
func due(next *atomic.Int64, every time.Duration) bool {
	now, n := time.Now().UnixNano(), next.Load()
	return now >= n && next.CompareAndSwap(n, now+int64(every))
}

// pricesFresh is how long a worker estimates on a price list before it
// reads it again: an estimate on old prices, lower than the service's new
// ones, would let the jobs spend past the budget. A variable for tests.
var pricesFresh = 10 * time.Minute

// estimate returns the most args may cost, on a price list read at most
// pricesFresh ago, or an older one while the service cannot send it.
func (w *Worker) estimate(ctx context.Context, args client.RawArgs) (float64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pricing == nil || time.Since(w.priced) >= pricesFresh {
		p, err := w.c.Pricing(ctx)
		switch {
		case err == nil:
			w.pricing, w.priced = p, time.Now()
		case w.pricing == nil:
			return 0, err
		default:
			w.logger.WarnContext(ctx, "riverjob: reading the price list failed; estimating on the last one", "err", err)
		}
	}
	est, err := w.pricing.Estimate(args)
	if err != nil {
		return 0, river.JobCancel(err)
	}
	return est.Max, nil
}

// interval is how long a job snoozes before checking again: the kind's
// polling schedule (first check after the first interval, growing with the
// time since the submit up to the last), or with webhooks the backstop: a
// first check when a render of the kind is normally over, then every
// poll.BackstopInterval.
func (w *Worker) interval(kind mediagen.Kind, since time.Time) time.Duration {
	if w.webhook != "" {
		switch {
		case since.IsZero():
			return jitter(poll.FirstBackstop(kind))
		case early(kind, since):
			return jitter(poll.FirstBackstop(kind) - time.Since(since))
		}
		return jitter(poll.BackstopInterval)
	}
	first, last := poll.Schedule(kind)
	d := first
	if !since.IsZero() {
		d = max(first, min(last, time.Since(since)/2))
	}
	return jitter(d)
}

// early reports whether a render of kind sent at since is not normally
// over yet: no check is due before three quarters of poll.FirstBackstop.
func early(kind mediagen.Kind, since time.Time) bool {
	return time.Since(since) < poll.FirstBackstop(kind)*3/4
}

// jitter spreads d by up to a tenth either way, so jobs do not check in step.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.2-0.1)*float64(d))
}

// refused reports whether the service refused the call: it charged nothing,
// and sending the same again would be refused again.
func refused(err error) bool {
	var ae *client.APIError
	if errors.As(err, &ae) {
		return ae.StatusCode >= 400 && ae.StatusCode < 500 &&
			ae.StatusCode != http.StatusTooManyRequests && ae.StatusCode != http.StatusRequestTimeout
	}
	return errors.Is(err, client.ErrInvalidArgument)
}
