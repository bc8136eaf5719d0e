package batch

import (
	"errors"
	"math"

	"github.com/mediagen/mediagen-go/client"
)

// A run takes [client.Option] values: the options of this package, and any
// of packages client and poll, which apply to every request of the run (the
// price list, each create, each wait, each save) on top of the client's.
// Two are the run's own and must not be given: [client.WithIdempotencyKey]
// (each item's key is sent with its create) and poll.OnUpdate (see
// [OnProgress]).

// DefaultConcurrency is the ceiling of creates in flight without
// [WithConcurrency].
const DefaultConcurrency = 8

var (
	budgetKey = client.NewKey("batch.WithBudget", func(usd float64) error {
		if math.IsNaN(usd) || math.IsInf(usd, 0) || usd < 0 {
			return errors.New("needs a finite amount of USD, 0 or more")
		}
		return nil
	})
	fitBudgetKey   = client.NewKey[bool]("batch.WithFitBudget", nil)
	concurrencyKey = client.NewKey("batch.WithConcurrency", func(n int) error {
		if n < 1 {
			return errors.New("needs a ceiling of at least 1")
		}
		return nil
	})
	saveToKey = client.NewKey("batch.WithSaveTo", func(dir string) error {
		if dir == "" {
			return errors.New("needs a folder")
		}
		return nil
	})
	progressKey = client.NewKey("batch.OnProgress", func(fn func(Progress)) error {
		if fn == nil {
			return errors.New("needs a non-nil function")
		}
		return nil
	})
	// fixedKey holds the window at the ceiling, without adapting: the
	// baseline of the load benchmark.
	fixedKey = client.NewKey[bool]("batch fixed concurrency", nil)
)

// WithBudget bounds what the run may spend, in USD. Before anything is
// sent, every item is priced at the most it can cost (the Max of
// [client.Pricing.Estimate]); a run whose total exceeds usd is refused with
// an error matching [ErrOverBudget], unless [WithFitBudget] is given.
// While it runs, what was charged plus the estimates of the creates in
// flight never exceeds usd. Without it the run is not priced or bounded.
func WithBudget(usd float64) client.Option { return budgetKey.Option(usd) }

// WithFitBudget runs, instead of refusing a run over the budget, the items
// that fit: the longest prefix of the items, in order, whose estimates
// together stay within it. The rest are not sent; each ends with an error
// matching [ErrOverBudget] and counts as skipped. It needs [WithBudget].
func WithFitBudget() client.Option { return fitBudgetKey.Option(true) }

// WithConcurrency sets the most creates in flight at once, n at least 1;
// the default is [DefaultConcurrency]. The run starts at min(4, n) and
// adapts below n: see [Run].
func WithConcurrency(n int) client.Option { return concurrencyKey.Option(n) }

// WithSaveTo saves the output (and a video's poster) of each generation
// that ends done into dir, as [client.Client.SaveOutput] does, with the
// item's key, so the journal records the save ([client.Client.Unfinished]
// no longer lists it). [ItemResult.SavedPath] says where. An item whose
// save fails ends with its done generation and the error.
func WithSaveTo(dir string) client.Option { return saveToKey.Option(dir) }

// OnProgress calls fn after each item is submitted and each ends. Calls
// are serialized, never concurrent, and the counts they report never go
// down; Spent may, when a failed render's refund is credited. fn runs while
// the run holds its place, so it must return quickly.
func OnProgress(fn func(Progress)) client.Option { return progressKey.Option(fn) }

// settings is what one run's options say.
type settings struct {
	budget   money // when limited
	limited  bool  // WithBudget was given
	fit      bool
	ceiling  int
	fixed    bool
	saveTo   string
	progress func(Progress)
	opts     []client.Option // every option, for the client and poll calls
}

// newSettings reads opts; a bad option fails the run before anything is
// sent.
func newSettings(opts []client.Option) (*settings, error) {
	s := &settings{ceiling: DefaultConcurrency, opts: opts}
	// Get checks every option, the client's too: the first call reports
	// them all.
	usd, limited, err := budgetKey.Get(opts)
	if err != nil {
		return nil, err
	}
	s.budget, s.limited = toMoney(usd), limited
	s.fit, _, _ = fitBudgetKey.Get(opts)
	if n, ok, _ := concurrencyKey.Get(opts); ok {
		s.ceiling = n
	}
	s.fixed, _, _ = fixedKey.Get(opts)
	s.saveTo, _, _ = saveToKey.Get(opts)
	s.progress, _, _ = progressKey.Get(opts)
	if s.fit && !s.limited {
		return nil, errors.New("batch.WithFitBudget: needs batch.WithBudget")
	}
	return s, nil
}
