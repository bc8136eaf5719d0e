package poll

import (
	"context"
	"time"

	"github.com/mediagen/mediagen-go/internal/wait"
)

// clock is where waits take the time and sleep, so tests can drive them
// with the reference server's fake clock instead of real time.
type clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done, returning ctx.Err() then.
	Sleep(ctx context.Context, d time.Duration) error
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error { return wait.Sleep(ctx, d) }

// deadline bounds a wait by WithMaxWait on top of the context.
type deadline struct {
	clock clock
	at    time.Time // zero: no bound
}

func newDeadline(s *settings) deadline {
	d := deadline{clock: s.clock}
	if s.maxWait > 0 {
		d.at = s.clock.Now().Add(s.maxWait)
	}
	return d
}

// sleep waits d, shortened to end at the deadline. It fails with ErrMaxWait
// once the deadline has passed, and with ctx.Err() when the context ends.
func (dl deadline) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !dl.at.IsZero() {
		rem := dl.at.Sub(dl.clock.Now())
		if rem <= 0 {
			return ErrMaxWait
		}
		d = min(d, rem)
	}
	return dl.clock.Sleep(ctx, d)
}
