package refserver

import (
	"sync/atomic"
	"time"
)

// AdvanceableClock is a [Clock] that can be moved forward on demand, such as
// [FakeClock] and [OffsetClock]. [Server.TestControl] moves the server's
// clock through it.
type AdvanceableClock interface {
	Clock
	Advance(d time.Duration)
}

// OffsetClock is the wall clock plus an offset that [OffsetClock.Advance]
// grows: a server on it runs in real time (renders progress, webhooks are
// retried after real seconds) yet a test can jump it forward past an expiry.
// The zero value shows real time. It is safe for concurrent use.
type OffsetClock struct {
	offset atomic.Int64 // nanoseconds; atomic so Now, read on every request, takes no lock
}

// NewOffsetClock returns an OffsetClock showing real time.
func NewOffsetClock() *OffsetClock { return &OffsetClock{} }

// Now returns the wall clock's time plus the offset.
func (c *OffsetClock) Now() time.Time {
	return time.Now().Add(time.Duration(c.offset.Load()))
}

// Advance adds d to the offset (moves the clock backward when d is
// negative). Like [FakeClock.Advance] it does not settle the server; call
// [Server.Settle] for that.
func (c *OffsetClock) Advance(d time.Duration) {
	c.offset.Add(int64(d))
}

// Offset returns how far the clock is ahead of the wall clock.
func (c *OffsetClock) Offset() time.Duration {
	return time.Duration(c.offset.Load())
}
