package batch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock moves only when slept on.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.slept += d
	c.mu.Unlock()
	return ctx.Err()
}

func TestWindowStartsAtFourOrTheCeiling(t *testing.T) {
	for ceiling, want := range map[int]int{1: 1, 3: 3, 4: 4, 8: 4, 64: 4} {
		assert.Equal(t, want, newWindow(ceiling, false, &fakeClock{}).Limit(), "ceiling %d", ceiling)
		assert.Equal(t, ceiling, newWindow(ceiling, true, &fakeClock{}).Limit(), "fixed at %d", ceiling)
	}
}

func TestWindowAIMD(t *testing.T) {
	clk := &fakeClock{}
	w := newWindow(64, false, clk)
	ctx := t.Context()
	succeed := func(n int) {
		for range n {
			e, err := w.acquire(ctx)
			require.NoError(t, err)
			w.done(e, success, 0)
		}
	}
	// Slow start: one slot per success until the first 429.
	succeed(4)
	assert.Equal(t, 8, w.Limit())
	succeed(52)
	assert.Equal(t, 60, w.Limit())
	succeed(10)
	assert.Equal(t, 64, w.Limit(), "never above the ceiling")

	// Three creates in flight; all end in 429: one decrease, not three.
	var epochs []int
	for range 3 {
		e, err := w.acquire(ctx)
		require.NoError(t, err)
		epochs = append(epochs, e)
	}
	for _, e := range epochs {
		w.done(e, rateLimited, 2*time.Second)
	}
	assert.Equal(t, 32, w.Limit())

	// The next send waits out the Retry-After.
	before := clk.Now()
	e, err := w.acquire(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, clk.Now().Sub(before))
	w.done(e, rateLimited, 0) // sent after the decrease: decreases again, pauses a second
	assert.Equal(t, 16, w.Limit())

	// Additive increase after a decrease: each success adds 1/size, so 16
	// take 16 to just under 17 and the seventeenth passes it.
	succeed(16)
	assert.Equal(t, 16, w.Limit())
	succeed(1)
	assert.Equal(t, 17, w.Limit())

	for range 6 {
		e, err := w.acquire(ctx)
		require.NoError(t, err)
		w.done(e, rateLimited, 0)
	}
	assert.Equal(t, 1, w.Limit(), "never below 1")
	assert.Equal(t, 2*time.Second+6*defaultRetryAfter, clk.slept)
	succeed(1)
	assert.Equal(t, 2, w.Limit(), "1 + 1/1")
}

func TestWindowFixedNeverAdapts(t *testing.T) {
	w := newWindow(16, true, &fakeClock{})
	e, err := w.acquire(t.Context())
	require.NoError(t, err)
	w.done(e, rateLimited, time.Second)
	assert.Equal(t, 16, w.Limit())
}

func TestWindowBlocksAtTheLimit(t *testing.T) {
	w := newWindow(2, false, &fakeClock{})
	e1, err := w.acquire(t.Context())
	require.NoError(t, err)
	_, err = w.acquire(t.Context())
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() {
		_, err := w.acquire(t.Context())
		got <- err
	}()
	select {
	case <-got:
		t.Fatal("a third create went out with a window of 2")
	case <-time.After(20 * time.Millisecond):
	}
	w.done(e1, neutral, 0)
	require.NoError(t, <-got)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = w.acquire(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}
