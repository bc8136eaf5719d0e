package client

import (
	"context"
	"errors"
	"time"
)

// Clock is where the client, and packages upload and poll acting for it,
// read the time and wait: retry backoffs, the search after an ambiguous
// failure, poll intervals. The default is the wall clock. Package
// clienttest gives its clients the reference server's fake clock, so a wait
// in a test moves that clock instead of sleeping.
type Clock interface {
	Now() time.Time
	// Sleep waits d, or until ctx ends, and then returns ctx.Err().
	Sleep(ctx context.Context, d time.Duration) error
}

// WithClock makes the client read the time from clk and wait on it, for
// tests: every retry backoff, the search after an ambiguous failure and
// the waits of packages acting for the client sleep on clk, so a test clock
// that moves when slept on makes them take no wall time.
func WithClock(clk Clock) Option {
	return func(s *settings) error {
		if clk == nil {
			return errors.New("mediagen: WithClock: nil clock")
		}
		s.clock = clk
		return nil
	}
}

// Clock returns the clock a call with opts reads the time from and waits
// on: the one a [WithClock] among opts sets, else the client's. Packages
// that wait on the client's behalf (poll) use it, so a test clock reaches
// their waits too.
func (c *Client) Clock(opts ...Option) Clock {
	if cfg, err := c.configure(opts); err == nil {
		return cfg.s.clock
	}
	return c.base.s.clock
}
