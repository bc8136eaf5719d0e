package batch

import (
	"sync"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

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
