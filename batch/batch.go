// Package batch runs many generations as one job: priced against a budget
// before anything is sent, submitted with a key per item so that a rerun
// after a crash resumes without charging twice, at a concurrency that backs
// off when the service rate-limits, and waited for (and saved) to the end.
//
//	res, err := batch.Run(ctx, c, items, batch.WithBudget(25), batch.WithSaveTo("out"))
//
// Resuming across processes needs a journal shared across restarts
// ([client.WithJournal]); the client's default one lives in memory.
// Client and poll options reach a run through [WithClientOptions] and
// [WithPollOptions].
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

// Item is one generation of a run. Key is its create's idempotency key
// (unique in the run, at most [client.MaxIdempotencyKey] bytes): an order
// number, say, not a counter a rerun would give other args.
type Item struct {
	Key  string
	Args client.Args
}

// ItemResult is how one item ended.
type ItemResult struct {
	Key string
	// Generation is the last state seen; nil when none was created.
	Generation *mediagen.Generation
	// Err is nil when it ended done (and saved); otherwise [ErrOverBudget],
	// the context's, the create's, the wait's (poll) or the save's error.
	Err error
	// SavedPath is where [WithSaveTo] saved the output; "" otherwise.
	SavedPath string
}

// Result is a run's outcome: Items in the order given, and counts;
// Done + Failed + Skipped is the number of items.
type Result struct {
	Items []ItemResult
	// Spent is what the items' generations were charged, in USD, refunds
	// credited; a create whose charge is uncertain is not counted.
	Spent float64
	// Submitted counts the items that have a generation, from this run or
	// an earlier one with the same journal.
	Submitted int
	Done      int
	Failed    int // sent or tried, and ended with an error
	Skipped   int // not sent: over the budget, or the run stopped first
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
// Items need args and distinct keys ([client.ErrInvalidArgument]
// otherwise); with [WithBudget] the run is priced first. Creates go out in
// order, their concurrency growing from min(4, ceiling) like TCP's
// congestion window (one slot per success until the first 429, then one
// per window of successes) and halving on a 429 that outlasted the
// client's retries; its Retry-After pauses all sends, and the item goes
// again later, up to 10 times. Then it waits for every generation (package
// poll), saving with [WithSaveTo].
//
// One item's failure is reported in its [ItemResult]. The error is for the
// run: bad input or options, over the budget, an unreadable price list
// (nothing sent), or the context ending (rerun with the same journal to
// resume).
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

// maxBadItems bounds the items one error lists.
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
	ests  []money // 0 without a budget
	win   *window

	mu      sync.Mutex
	res     []ItemResult
	ended   []bool
	charged []money // refunds credited
	ledger  ledger
	queue   []int // items to send; 429s go to the back
	tries   []int // 429s per item
	counts  Progress

	reportMu sync.Mutex // keeps OnProgress calls in order
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

// skip ends item i, never sent, with err.
func (r *run) skip(i int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res[i].Err = err
	r.ended[i] = true
}

// created records item i's generation, its charge replacing its estimate.
func (r *run) created(i int, g *mediagen.Generation) {
	r.mu.Lock()
	r.res[i].Generation = g
	r.charged[i] = toMoney(g.BalanceUsed)
	r.ledger.settle(r.ests[i], r.charged[i])
	r.counts.Submitted++
	r.mu.Unlock()
	r.report()
}

// finish ends item i with g (nil keeps the one it has) and err, crediting
// the refund of a failed render.
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
	if g := r.res[i].Generation; g != nil && g.Status.Failed() {
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

// report calls OnProgress; reportMu, held while the state is read, keeps
// the calls in the order of the states they report.
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

func (r *run) result() Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := Result{Items: r.res, Spent: r.ledger.spent.usd(), Submitted: r.counts.Submitted,
		Done: r.counts.Done, Failed: r.counts.Failed}
	res.Skipped = len(r.items) - res.Done - res.Failed
	return res
}
