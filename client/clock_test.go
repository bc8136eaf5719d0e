package client_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
)

// testClock is a client clock whose waits take no wall time and are
// recorded, so a test can run a search budget of minutes in milliseconds
// and then look at every wait. See newTestClock and newServerClock.
type testClock struct {
	srv *clienttest.Server // when set, the time is the server's and a wait advances it

	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

// newTestClock returns a clock of its own, for clients of servers that are
// not the reference server.
func newTestClock() *testClock { return &testClock{now: clienttest.StartTime} }

// newServerClock returns a client clock that is srv's, as the clients
// srv.Client returns have, but that records its waits: they (retry
// backoffs of the client's own, the search after an ambiguous failure,
// downloads, and the retries of each request) advance the server instead of
// sleeping.
func newServerClock(srv *clienttest.Server) *testClock { return &testClock{srv: srv} }

// Option installs the clock in a client.
func (c *testClock) Option() client.Option { return client.WithClock(c) }

func (c *testClock) Now() time.Time {
	if c.srv != nil {
		return c.srv.Now()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.waits = append(c.waits, d)
	if c.srv == nil {
		c.now = c.now.Add(d)
	}
	c.mu.Unlock()
	if c.srv != nil && d > 0 {
		c.srv.Advance(d)
	}
	return ctx.Err()
}

// Waits returns the waits so far, in order.
func (c *testClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.waits)
}

// wallClock returns the clock a client has by default, the wall clock: for
// a test whose point is a wait that takes wall time, on a client of
// clienttest, whose waits would otherwise move the server's clock.
func wallClock(t testing.TB) client.Clock {
	c, err := client.New("mg_key_123456", client.WithBaseURL("http://127.0.0.1:1"))
	require.NoError(t, err)
	return c.Clock()
}
