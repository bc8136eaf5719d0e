package client_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/link"
	"github.com/mediagen/mediagen-go/internal/refserver"
)

// testServer is a reference server for the client's own tests: unlike
// clienttest's it exposes the server itself (faults, balances, projects)
// and its listener, and its clients sleep on the wall clock, so retry and
// search timing is what users see against the real service.
type testServer struct {
	URL, APIKey, WebhookSecret string
	Ref                        *refserver.Server
	HTTP                       *httptest.Server
	Clock                      *refserver.FakeClock
	tb                         testing.TB
}

func newTestServer(t testing.TB, opts ...refserver.Option) *testServer {
	t.Helper()
	clock := refserver.NewFakeClock(clienttest.StartTime)
	defaults := []refserver.Option{
		refserver.WithClock(clock),
		refserver.WithRenderScale(0.01),
		refserver.WithProject(clienttest.APIKey, clienttest.Balance),
		refserver.WithAllowHTTPWebhooks(),
	}
	ref := refserver.New(append(defaults, opts...)...)
	hs := httptest.NewServer(ref)
	t.Cleanup(func() {
		hs.Close()
		ref.Close()
	})
	s := &testServer{URL: hs.URL, APIKey: clienttest.APIKey, Ref: ref, HTTP: hs, Clock: clock, tb: t}
	if p, ok := ref.Project(clienttest.APIKey); ok {
		s.WebhookSecret = p.WebhookSecret
	}
	return s
}

// Client returns a client of the default project with fast retries.
func (s *testServer) Client(opts ...client.Option) *client.Client {
	defaults := []client.Option{
		client.WithBaseURL(s.URL),
		client.WithHTTPClient(s.HTTP.Client()),
		client.WithRetryWait(time.Millisecond, 10*time.Millisecond),
	}
	c, err := client.New(s.APIKey, append(defaults, opts...)...)
	if err != nil {
		s.tb.Fatal(err)
	}
	return c
}

// Advance moves the fake clock and settles the server.
func (s *testServer) Advance(d time.Duration) {
	s.Clock.Advance(d)
	s.Ref.Settle()
}

// Balance returns the default project's balance.
func (s *testServer) Balance() float64 { return s.Ref.Balance(s.APIKey) }

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
func (c *testClock) Option() client.Option { return link.WithClock(c).(client.Option) }

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
