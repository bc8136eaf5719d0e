package retry

import (
	"context"
	"errors"
	"time"
)

// Clock is where a loop reads the time and waits; a test clock that moves
// when slept on makes a backoff take no wall time.
type Clock interface {
	Now() time.Time
	// Sleep waits d, or until ctx ends, and then returns ctx.Err().
	Sleep(ctx context.Context, d time.Duration) error
}

// Policy says how often and how patiently a failed attempt is tried again.
type Policy struct {
	// MaxRetries bounds the retries after the first attempt; negative leaves
	// only Budget to bound them.
	MaxRetries int
	// WaitMin is the first backoff step; steps double up to WaitMax.
	WaitMin, WaitMax time.Duration
	// Budget, when set, ends the retries once the next wait would end past
	// it, counted from the first attempt.
	Budget time.Duration
	// Patient waits out any Retry-After; otherwise one longer than WaitMax
	// ends the retries, so the caller sees it rather than a long silence.
	Patient bool
}

// Outcome is what one attempt reports to [Do].
type Outcome struct {
	Err   error         // nil on success
	Retry bool          // the same attempt may succeed later
	After time.Duration // what the answer asked to wait, 0 if nothing
}

// BudgetError is the last failure of retries that ran out of [Policy.Budget].
type BudgetError struct {
	Budget time.Duration
	Err    error
}

func (e *BudgetError) Error() string {
	return "still failing after " + e.Budget.String() + ": " + e.Err.Error()
}

func (e *BudgetError) Unwrap() error { return e.Err }

// Do is the SDK's one retry loop: it calls try with the attempt number from
// 0 until it succeeds, fails for good or p allows no more retries, waiting
// on clock between attempts. It returns the last error, ctx.Err() once ctx
// ended, or a [*BudgetError]. onRetry, if set, sees each retried failure.
func Do(ctx context.Context, clock Clock, p Policy, try func(n int) Outcome, onRetry func(err error, n int, wait time.Duration)) error {
	var start time.Time // only a budget needs it
	if p.Budget > 0 {
		start = clock.Now()
	}
	for n := 0; ; n++ {
		o := try(n)
		switch {
		case o.Err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case !o.Retry, p.MaxRetries >= 0 && n >= p.MaxRetries, o.After > p.WaitMax && !p.Patient:
			return o.Err
		}
		wait := max(Backoff(p.WaitMin, p.WaitMax, n), o.After)
		if p.Budget > 0 && clock.Now().Sub(start)+wait > p.Budget {
			return &BudgetError{Budget: p.Budget, Err: o.Err}
		}
		if onRetry != nil {
			onRetry(o.Err, n, wait)
		}
		if err := clock.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// Transient reports whether err says, by a method Transient() bool, that
// the same attempt may not meet it again (a 429 or 5xx, a broken connection,
// an answer cut short); an ended context and errors that do not say are final.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var t interface{ Transient() bool }
	return errors.As(err, &t) && t.Transient()
}

// Wall is the real time, for loops that no test clock drives.
var Wall Clock = wallClock{}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) Sleep(ctx context.Context, d time.Duration) error { return Sleep(ctx, d) }

// Sleep waits d, or until ctx ends, and returns ctx.Err(); at once for d <= 0.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d): // collected once unreferenced, as of Go 1.23
		return nil
	}
}
