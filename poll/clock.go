package poll

import (
	"context"
	"time"

	"github.com/mediagen/mediagen-go/client"
)

// deadline bounds a wait by WithMaxWait on top of the context.
type deadline struct {
	clock client.Clock
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
