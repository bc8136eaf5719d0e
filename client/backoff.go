package client

import (
	"context"
	"log/slog"
	"time"

	"github.com/mediagen/mediagen-go/internal/retry"
)

// retrier is the one retry loop for what is not a single API request: the
// storage PUT, downloads and the search after an ambiguous failure. It
// waits on the client's clock, so a test clock moves instead of sleeping.
// (API requests retry inside go-retryablehttp, with the same backoff.)
type retrier struct {
	clock            Clock
	logger           *slog.Logger
	what             string        // names the operation in logs
	retries          int           // retries after the first attempt; -1: only the budget bounds them
	waitMin, waitMax time.Duration // the backoff's first step and cap
	// budget, when set, ends the retries once the next wait would end past
	// it, counted from the first attempt.
	budget time.Duration
	// patient waits out any Retry-After; otherwise one longer than waitMax
	// ends the retries, so the caller sees it instead of a long silent sleep.
	patient bool
}

// outcome is what one attempt reports.
type outcome struct {
	err        error         // nil on success
	retry      bool          // the same attempt may succeed later
	retryAfter time.Duration // what the answer asked to wait
}

// transferRetrier retries under the call's retry policy.
func transferRetrier(cfg *config, what string) *retrier {
	p := cfg.s.retry
	return &retrier{clock: cfg.s.clock, logger: cfg.s.logger, what: what,
		retries: p.MaxRetries, waitMin: p.WaitMin, waitMax: p.WaitMax}
}

// run calls try with the attempt number, from 0, until it succeeds, fails
// for good, or runs out of retries or budget; it returns the last error,
// or ctx.Err() once the context ended.
func (r *retrier) run(ctx context.Context, try func(n int) outcome) error {
	var deadline time.Time
	if r.budget > 0 {
		deadline = r.clock.Now().Add(r.budget)
	}
	for n := 0; ; n++ {
		o := try(n)
		switch {
		case o.err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case !o.retry, r.retries >= 0 && n >= r.retries, o.retryAfter > r.waitMax && !r.patient:
			return o.err
		}
		wait := max(retry.Backoff(r.waitMin, r.waitMax, n), o.retryAfter)
		if !deadline.IsZero() && r.clock.Now().Add(wait).After(deadline) {
			return &budgetError{budget: r.budget, err: o.err}
		}
		r.logger.LogAttrs(ctx, slog.LevelDebug, "mediagen: "+r.what+" failed; retrying",
			slog.String("error", o.err.Error()), slog.Int("attempt", n+2), slog.Duration("wait", wait))
		if err := r.clock.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// budgetError is the last failure of retries that ran out of time.
type budgetError struct {
	budget time.Duration
	err    error
}

func (e *budgetError) Error() string {
	return "still failing after " + e.budget.String() + ": " + e.err.Error()
}
func (e *budgetError) Unwrap() error { return e.err }
