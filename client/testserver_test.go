package client_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/refserver"
	"github.com/mediagen/mediagen-go/internal/reftest"
)

// testServer is the reference server of the module's tests; its clients
// sleep on the wall clock unless a test installs NewClock's, so retry and
// search timing is what users see against the real service.
type testServer struct{ *reftest.Server }

func newTestServer(t testing.TB, opts ...refserver.Option) *testServer {
	t.Helper()
	return &testServer{reftest.New(t, opts...)}
}

// testClock is a client clock whose waits take no wall time: a wait moves
// it forward instead, so a test can run a search budget of minutes in
// milliseconds. The waits are recorded. See newTestClock and
// testServer.NewClock.
type testClock struct {
	srv *testServer // when set, the time is the server's and a wait advances it

	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

// newTestClock returns a clock of its own, for clients of servers that are
// not the reference server.
func newTestClock() *testClock { return &testClock{now: clienttest.StartTime} }

// NewClock returns a client clock that is the server's: its waits (retry
// backoffs of the client's own, the search after an ambiguous failure,
// downloads) advance the server instead of sleeping. The retries inside
// go-retryablehttp still sleep, for at most the 10 ms Client allows.
func (s *testServer) NewClock() *testClock { return &testClock{srv: s} }

// Option installs the clock in a client.
func (c *testClock) Option() client.Option { return client.WithClock(c) }

func (c *testClock) Now() time.Time {
	if c.srv != nil {
		return c.srv.Clock.Now()
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
