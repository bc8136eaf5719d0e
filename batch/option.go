package batch

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/poll"
)

// Option configures one [Run]. A bad option fails the run before anything
// is sent; a nil Option is skipped.
type Option func(*settings) error

// option applies set when ok, and fails with problem otherwise.
func option(ok bool, problem string, set func(*settings)) Option {
	return func(s *settings) error {
		if !ok {
			return errors.New(problem)
		}
		set(s)
		return nil
	}
}

// DefaultConcurrency is the ceiling of creates in flight without
// [WithConcurrency].
const DefaultConcurrency = 8

// WithBudget bounds what the run may spend, in USD. Every item is first
// priced at its most ([client.Pricing.Estimate]'s Max): a run whose total
// exceeds usd is refused with [ErrOverBudget], unless [WithFitBudget]. While
// it runs, charges plus the estimates in flight never exceed usd.
func WithBudget(usd float64) Option {
	return option(!math.IsNaN(usd) && !math.IsInf(usd, 0) && usd >= 0,
		fmt.Sprintf("batch.WithBudget(%g): needs a finite amount of USD, 0 or more", usd),
		func(s *settings) { s.budget, s.limited = toMoney(usd), true })
}

// WithFitBudget runs, instead of refusing a run over the budget, the longest
// prefix of the items that fits; the rest end with [ErrOverBudget] as
// skipped. It needs [WithBudget].
func WithFitBudget() Option {
	return option(true, "", func(s *settings) { s.fit = true })
}

// DefaultMaxPause is the longest Retry-After a run waits out without
// [WithMaxPause].
const DefaultMaxPause = time.Minute

// WithMaxPause sets the longest pause (a Retry-After) the run waits out; an
// item the service asks to wait longer for ends, naming the wait, and the
// run goes on. d must be positive.
func WithMaxPause(d time.Duration) Option {
	return option(d > 0, fmt.Sprintf("batch.WithMaxPause(%s): needs a positive duration", d),
		func(s *settings) { s.maxPause = d })
}

// WithConcurrency sets the most creates in flight, n at least 1; the run
// starts at min(4, n) and adapts below n (see [Run]).
func WithConcurrency(n int) Option {
	return option(n >= 1, fmt.Sprintf("batch.WithConcurrency(%d): needs a ceiling of at least 1", n),
		func(s *settings) { s.ceiling = n })
}

// WithSaveTo saves the outputs of each generation that ends done into dir
// with the item's key, so the journal records the save;
// [ItemResult.SavedPath] says where.
func WithSaveTo(dir string) Option {
	return option(dir != "", "batch.WithSaveTo: needs a folder", func(s *settings) { s.saveTo = dir })
}

// OnProgress calls fn, one call at a time, after each item is submitted and
// each ends. Counts never go down, except Spent when a refund is credited
// and Done when a save of [WithPollOptions] fails later. fn must return
// quickly.
func OnProgress(fn func(Progress)) Option {
	return option(fn != nil, "batch.OnProgress: needs a non-nil function", func(s *settings) { s.progress = fn })
}

// WithClientOptions applies opts to every request of the run; several add
// up. Options that cannot apply to a call, or to one call only
// ([client.WithIdempotencyKey], [client.WithResponseInto]), are refused.
func WithClientOptions(opts ...client.Option) Option {
	return option(true, "", func(s *settings) { s.clientOpts = append(slices.Clip(s.clientOpts), opts...) })
}

// WithPollOptions applies opts to the run's waits (poll.Generations);
// several add up, and what poll refuses fails the run before it sends.
func WithPollOptions(opts ...poll.Option) Option {
	return option(true, "", func(s *settings) { s.pollOpts = append(slices.Clip(s.pollOpts), opts...) })
}

// settings is what one run's options say.
type settings struct {
	budget     money
	limited    bool // WithBudget was given
	fit        bool
	ceiling    int
	fixed      bool
	saveTo     string
	maxPause   time.Duration
	progress   func(Progress)
	clientOpts []client.Option // shared, clipped on append
	pollOpts   []poll.Option   // shared, clipped on append
}

// newSettings reads opts, joining every problem.
func newSettings(opts []Option) (*settings, error) {
	s := &settings{ceiling: DefaultConcurrency, maxPause: DefaultMaxPause}
	var errs []error
	for _, o := range opts {
		if o != nil {
			errs = append(errs, o(s))
		}
	}
	if s.fit && !s.limited {
		errs = append(errs, errors.New("batch.WithFitBudget: needs batch.WithBudget"))
	}
	if err := client.CheckSharedOptions(s.clientOpts...); err != nil {
		errs = append(errs, fmt.Errorf("batch.WithClientOptions: %w", err))
	}
	if err := poll.CheckOptions(s.pollOpts...); err != nil {
		errs = append(errs, fmt.Errorf("batch.WithPollOptions: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}
