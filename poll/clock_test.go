package poll

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a clock whose Sleep moves time at once and records the
// waits; onSleep, when set, runs first (tests advance the reference
// server's clock there).
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	sleeps  []time.Duration
	onSleep func(time.Duration)
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.onSleep != nil {
		f.onSleep(d)
	}
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.sleeps = append(f.sleeps, d)
	f.mu.Unlock()
	return ctx.Err()
}

func (f *fakeClock) waits() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

func (f *fakeClock) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sleeps = nil
}

// withClock makes a wait use c.
func withClock(c clock) Option {
	return func(s *settings) error { s.clock = c; return nil }
}

func TestDeadlineShortensTheLastSleep(t *testing.T) {
	fc := newFakeClock()
	s := &settings{clock: fc, maxWait: 7 * time.Second}
	dl := newDeadline(s)
	ctx := context.Background()
	require.NoError(t, dl.sleep(ctx, 5*time.Second))
	require.NoError(t, dl.sleep(ctx, 5*time.Second))
	assert.ErrorIs(t, dl.sleep(ctx, 5*time.Second), ErrMaxWait)
	assert.Equal(t, []time.Duration{5 * time.Second, 2 * time.Second}, fc.waits())
}

func TestDeadlineHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dl := newDeadline(&settings{clock: realClock{}})
	start := time.Now()
	assert.ErrorIs(t, dl.sleep(ctx, time.Hour), context.Canceled)
	assert.Less(t, time.Since(start), time.Second)

	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, realClock{}.Sleep(ctx, time.Hour), context.DeadlineExceeded)
	assert.NoError(t, realClock{}.Sleep(context.Background(), time.Millisecond))
}
