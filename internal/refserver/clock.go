package refserver

import (
	"sync"
	"time"
)

// Clock tells the server what time it is. Every transition (render progress,
// expiry of generations, files and signed URLs) is computed from it, so a
// test that controls the clock controls the whole lifecycle.
type Clock interface{ Now() time.Time }

// realClock is the wall clock, the default.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// FakeClock is a Clock that only moves when told to. It is safe for
// concurrent use. Advancing it does not settle the server by itself; the
// server settles lazily on the next request, on its background ticker, or
// at once through [Server.Settle].
type FakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewFakeClock returns a FakeClock showing start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start}
}

// Now returns the clock's current time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (backward when d is negative).
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
