// Package batch runs many generations as one job: priced against a budget
// before anything is sent, submitted with a key per item so that a rerun
// after a crash resumes without charging twice, at a concurrency that backs
// off when the service rate-limits, and waited for (and saved) to the end.
//
//	res, err := batch.Run(ctx, c, items, batch.WithBudget(25), batch.WithConcurrency(16), batch.WithSaveTo("out"))
//
// Give the client a journal shared across restarts ([client.WithJournal]
// on a SQLite or PostgreSQL database): each item is created with
// [client.WithIdempotencyKey] of its key, so running the same items again
// after a crash or a cancelled run gets the generations already created
// back from the journal, sends only what was never sent, and waits for
// and saves what is not finished. Without a journal the client keeps its
// own in memory, which protects only within one process.
//
// A run takes options of this package's own [Option] type. Options of
// package client reach its requests through [WithClientOptions], and
// options of package poll its waits through [WithPollOptions]; given
// directly to Run, they do not compile.
package batch

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

// Item is one generation of a run. Key names it for good: it is the
// idempotency key its create is sent with (1 to
// [client.MaxIdempotencyKey] bytes, unique within the run), so an order
// number or a job id, not a counter that a rerun would hand to other
// arguments.
type Item struct {
	Key  string
	Args client.Args
}

// ItemResult is how one item ended.
type ItemResult struct {
	Key string
	// Generation is the item's generation: terminal when the run waited to
	// the end, the last state seen otherwise; nil when none was created.
	Generation *mediagen.Generation
	// Err is nil when the generation ended done (and, with [WithSaveTo],
	// was saved). Otherwise it says why: an error matching
	// [ErrOverBudget] or the context's error for an item not sent, the
	// create's error, a poll.FailedError (its charge was refunded), a
	// poll.GaveUpError (the wait stopped: run again to resume), or the
	// save's error with a done generation.
	Err error
	// SavedPath is where [WithSaveTo] saved the output; "" otherwise.
	SavedPath string
}

// Result is a run's outcome: Items in the order of the items given, and
// counts. Done + Failed + Skipped is the number of items.
type Result struct {
	Items []ItemResult
	// Spent is what the run's generations were charged, in USD, refunds
	// of failed renders credited; generations a previous run created under
	// the same keys count too. An item whose create may or may not have
	// been charged (an error, or the run stopped while it was in flight)
	// is not counted; the journal settles it on the next run.
	Spent float64
	// Submitted counts the items that have a generation, created by this
	// run or by an earlier one with the same journal.
	Submitted int
	// Done counts the items that ended done (and saved, with [WithSaveTo]).
	Done int
	// Failed counts the items that were sent, or tried, and ended with an
	// error.
	Failed int
	// Skipped counts the items not sent: over the budget, or not reached
	// before the run stopped.
	Skipped int
}

// Progress is a run's state, for [OnProgress].
type Progress struct {
	Submitted, Done, Failed int
	Spent                   float64 // USD, as in [Result]
	Concurrency             int     // the most creates in flight allowed now
}

// Run creates a generation for each item, waits for all of them, and
// returns how each ended.
//
// Before sending anything it checks the items (each needs args and a key,
// and keys must differ: otherwise an error matching
// [client.ErrInvalidArgument]) and, with [WithBudget], prices the whole run
// (see there). Then it submits the items in order, with at most the
// ceiling of [WithConcurrency] creates in flight. That concurrency starts
// at min(4, ceiling) and grows as TCP's congestion window does: by one
// slot per success until the first 429 (reaching 64 after 60 creates),
// then by one slot per window's worth of successes. It halves (down to 1)
// when a create ends in 429, whose Retry-After also pauses every new
// send; the item is sent again later (a 429 charged nothing), up to 10
// times. The client retries a 429 itself first
// ([client.WithMaxRetries]), waiting out each Retry-After, so the run
// adapts to rate limiting that outlasts those retries. It does not lower
// them for its creates: a 429 the run sees halves its window, and with
// fewer retries every brief burst of 429s would (BENCHMARKS.md has the
// figures).
//
// It then waits for every generation through the list endpoint (package
// poll), saving outputs with [WithSaveTo] as each ends done. One item's
// failure does not stop the others: it is reported in its [ItemResult]. The
// error is for the run as a whole: bad input or options, a run over the
// budget, a price list that could not be read (nothing was sent in those
// cases), or the context ending, when the result holds what was recorded
// and running the same items again with the same journal resumes.
func Run(ctx context.Context, c *client.Client, items []Item, opts ...Option) (Result, error) {
	if c == nil {
		return Result{}, errors.New("batch: nil client")
	}
	s, err := newSettings(opts)
	if err != nil {
		return Result{}, err
	}
	if err := check(items); err != nil {
		return Result{}, err
	}
	r := newRun(c, items, s)
	n := len(items)
	if s.limited {
		if r.ests, err = price(ctx, c, items, s); err != nil {
			return Result{}, err
		}
		if n, err = fit(r.ests, s); err != nil {
			return Result{}, err
		}
	}
	for i := n; i < len(items); i++ {
		r.skip(i, fmt.Errorf("%w: not sent: the items before it use up the budget of %s", ErrOverBudget, s.budget))
	}
	r.submit(ctx, n)
	r.wait(ctx)
	res := r.result()
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("batch: stopped: %w; %d of %d items have a generation (%d done, %d failed, %d not sent); "+
			"run the same items again with the same journal (client.WithJournal) to resume: their keys are not sent twice",
			err, res.Submitted, len(items), res.Done, res.Failed, res.Skipped)
	}
	return res, nil
}

// maxBadItems bounds the problems one error lists.
const maxBadItems = 10

// check refuses items without args or key, and repeated keys.
func check(items []Item) error {
	var errs []error
	seen := make(map[string]int, len(items))
	bad := 0
	for i, it := range items {
		var problem string
		switch first, dup := seen[it.Key]; {
		case it.Key == "":
			problem = "no key"
		case len(it.Key) > client.MaxIdempotencyKey:
			problem = fmt.Sprintf("a key of %d bytes (at most %d)", len(it.Key), client.MaxIdempotencyKey)
		case dup:
			problem = fmt.Sprintf("key %q repeats item %d", it.Key, first)
		case nilArgs(it.Args):
			problem = "no args"
		default:
			seen[it.Key] = i
			continue
		}
		if bad++; bad <= maxBadItems {
			errs = append(errs, fmt.Errorf("batch: item %d: %w: %s", i, client.ErrInvalidArgument, problem))
		}
	}
	if bad > maxBadItems {
		errs = append(errs, fmt.Errorf("batch: and %d more items like these", bad-maxBadItems))
	}
	return errors.Join(errs...)
}

func nilArgs(a client.Args) bool {
	if a == nil {
		return true
	}
	v := reflect.ValueOf(a)
	return v.Kind() == reflect.Pointer && v.IsNil() || a.Feature() == ""
}

// run is the state of one Run.
type run struct {
	c     *client.Client
	s     *settings
	items []Item
	ests  []money // each item's most; 0 without a budget
	win   *window

	mu      sync.Mutex
	res     []ItemResult
	ended   []bool  // the item's outcome is final
	charged []money // what each item's generation was charged, refunds credited
	ledger  ledger
	queue   []int // items to send, in order; 429s go to the back
	tries   []int // 429s per item
	counts  Progress

	reportMu sync.Mutex // serializes OnProgress calls
}

func newRun(c *client.Client, items []Item, s *settings) *run {
	r := &run{c: c, s: s, items: items, ests: make([]money, len(items)), win: newWindow(s.ceiling, s.fixed, c.Clock(s.clientOpts...)),
		res: make([]ItemResult, len(items)), ended: make([]bool, len(items)),
		charged: make([]money, len(items)), tries: make([]int, len(items)),
		ledger: ledger{budget: s.budget, limited: s.limited}}
	for i, it := range items {
		r.res[i].Key = it.Key
	}
	return r
}

// skip ends item i, never sent, with err. Locks r.mu.
func (r *run) skip(i int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res[i].Err = err
	r.ended[i] = true
}

// created records item i's generation, charged g.BalanceUsed, in place of
// its estimate.
func (r *run) created(i int, g *mediagen.Generation) {
	r.mu.Lock()
	r.res[i].Generation = g
	r.charged[i] = toMoney(g.BalanceUsed)
	r.ledger.settle(r.ests[i], r.charged[i])
	r.counts.Submitted++
	r.mu.Unlock()
	r.report()
}

// finish ends item i with g (nil keeps the one it has) and err. A
// generation that ended in error or timeout was refunded: its charge is
// credited back.
func (r *run) finish(i int, g *mediagen.Generation, err error, savedPath string) {
	r.mu.Lock()
	if r.ended[i] {
		r.mu.Unlock()
		return
	}
	r.ended[i] = true
	if g != nil {
		r.res[i].Generation = g
	}
	r.res[i].Err, r.res[i].SavedPath = err, savedPath
	if g := r.res[i].Generation; g != nil && refunded(g) {
		r.ledger.spent -= r.charged[i]
		r.charged[i] = 0
	}
	if err == nil {
		r.counts.Done++
	} else {
		r.counts.Failed++
	}
	r.mu.Unlock()
	r.report()
}

// refunded reports whether the service refunded g's charge.
func refunded(g *mediagen.Generation) bool {
	return g.Status == mediagen.GenerationStatusError || g.Status == mediagen.GenerationStatusTimeout
}

// report calls OnProgress with the state now. Holding reportMu while the
// state is read keeps the calls in the order of the state they report.
func (r *run) report() {
	if r.s.progress == nil {
		return
	}
	r.reportMu.Lock()
	defer r.reportMu.Unlock()
	r.mu.Lock()
	p := r.counts
	p.Spent = r.ledger.spent.usd()
	r.mu.Unlock()
	p.Concurrency = r.win.Limit()
	r.s.progress(p)
}

// result builds the Result; every item has ended.
func (r *run) result() Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := Result{Items: r.res, Spent: r.ledger.spent.usd(), Submitted: r.counts.Submitted,
		Done: r.counts.Done, Failed: r.counts.Failed}
	res.Skipped = len(r.items) - res.Done - res.Failed
	return res
}
