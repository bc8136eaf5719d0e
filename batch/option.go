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

// Option configures one [Run]. An option given a bad value makes the run
// fail before anything is sent, with an error naming it; a nil Option is
// skipped.
type Option func(*settings) error

// DefaultConcurrency is the ceiling of creates in flight without
// [WithConcurrency].
const DefaultConcurrency = 8

// WithBudget bounds what the run may spend, in USD. Before anything is
// sent, every item is priced at the most it can cost (the Max of
// [client.Pricing.Estimate]); a run whose total exceeds usd is refused with
// an error matching [ErrOverBudget], unless [WithFitBudget] is given.
// While it runs, what was charged plus the estimates of the creates in
// flight never exceeds usd. Without it the run is not priced or bounded.
func WithBudget(usd float64) Option {
	return func(s *settings) error {
		if math.IsNaN(usd) || math.IsInf(usd, 0) || usd < 0 {
			return fmt.Errorf("batch.WithBudget(%g): needs a finite amount of USD, 0 or more", usd)
		}
		s.budget, s.limited = toMoney(usd), true
		return nil
	}
}

// WithFitBudget runs, instead of refusing a run over the budget, the items
// that fit: the longest prefix of the items, in order, whose estimates
// together stay within it. The rest are not sent; each ends with an error
// matching [ErrOverBudget] and counts as skipped. It needs [WithBudget].
func WithFitBudget() Option {
	return func(s *settings) error {
		s.fit = true
		return nil
	}
}

// DefaultMaxPause is the longest Retry-After a run waits out without
// [WithMaxPause].
const DefaultMaxPause = time.Minute

// WithMaxPause sets the longest pause the service may ask of the run (a
// Retry-After on a create, a check or the price list); d must be positive.
// An item the service asks to wait longer for ends at once, with an error
// naming the wait, and the run goes on with the others. The default is
// [DefaultMaxPause].
func WithMaxPause(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return fmt.Errorf("batch.WithMaxPause(%s): needs a positive duration", d)
		}
		s.maxPause = d
		return nil
	}
}

// WithConcurrency sets the most creates in flight at once, n at least 1;
// the default is [DefaultConcurrency]. The run starts at min(4, n) and
// adapts below n: see [Run].
func WithConcurrency(n int) Option {
	return func(s *settings) error {
		if n < 1 {
			return fmt.Errorf("batch.WithConcurrency(%d): needs a ceiling of at least 1", n)
		}
		s.ceiling = n
		return nil
	}
}

// WithSaveTo saves the output (and a video's poster) of each generation
// that ends done into dir, as [client.Client.SaveOutput] does, with the
// item's key, so the journal records the save ([client.Client.Unfinished]
// no longer lists it). [ItemResult.SavedPath] says where. An item whose
// save fails ends with its done generation and the error.
func WithSaveTo(dir string) Option {
	return func(s *settings) error {
		if dir == "" {
			return errors.New("batch.WithSaveTo: needs a folder")
		}
		s.saveTo = dir
		return nil
	}
}

// OnProgress calls fn after each item is submitted and each ends. Calls
// are serialized, never concurrent, and the counts they report never go
// down; Spent may, when a failed render's refund is credited, and so may
// Done, for an item whose save by poll options ([WithPollOptions]) fails
// after it was counted done. fn runs while the run holds its place, so it
// must return quickly.
func OnProgress(fn func(Progress)) Option {
	return func(s *settings) error {
		if fn == nil {
			return errors.New("batch.OnProgress: needs a non-nil function")
		}
		s.progress = fn
		return nil
	}
}

// WithClientOptions applies opts (a timeout, a header, a retry policy, a
// logger, middleware...) to every request of the run, on top of the
// client's: the price list, each create, each wait's checks, each save.
// Several add up, in order. The run refuses, before sending anything, a
// client option that cannot apply to a call and one that applies to one
// call only: [client.WithIdempotencyKey] (each item's create carries the
// item's key) and [client.WithResponseInto] (the run makes many calls at
// once).
func WithClientOptions(opts ...client.Option) Option {
	return func(s *settings) error {
		s.clientOpts = append(slices.Clip(s.clientOpts), opts...)
		return nil
	}
}

// WithPollOptions applies opts (poll.WithHub, poll.WithInterval,
// poll.WithMaxWait...) to the run's waits, which go through
// poll.Generations. Several add up, in order. The run refuses, before
// sending anything, what poll.Generations would refuse. A poll.OnUpdate
// given here sees every generation the run waits on, beside the run's own
// (see also [OnProgress]).
func WithPollOptions(opts ...poll.Option) Option {
	return func(s *settings) error {
		s.pollOpts = append(slices.Clip(s.pollOpts), opts...)
		return nil
	}
}

// settings is what one run's options say.
type settings struct {
	budget     money // when limited
	limited    bool  // WithBudget was given
	fit        bool
	ceiling    int
	fixed      bool
	saveTo     string
	maxPause   time.Duration
	progress   func(Progress)
	clientOpts []client.Option // for every request of the run; shared, clipped on append
	pollOpts   []poll.Option   // for the waits; shared, clipped on append
}

// newSettings reads opts; a bad option fails the run before anything is
// sent. The error joins every problem.
func newSettings(opts []Option) (*settings, error) {
	s := &settings{ceiling: DefaultConcurrency, maxPause: DefaultMaxPause}
	var errs []error
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(s); err != nil {
			errs = append(errs, err)
		}
	}
	if s.fit && !s.limited {
		errs = append(errs, errors.New("batch.WithFitBudget: needs batch.WithBudget"))
	}
	// Each item's create carries its own key, and the run's calls run at
	// once: options for one call have no place among the run's.
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
