package poll

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/refserver"
)

// testServer is a reference server on a fake clock that these tests drive
// themselves; unlike clienttest's, it takes any refserver option (a wall
// clock, outcomes) and its clients sleep on whatever clock a test gives.
type testServer struct {
	URL    string
	APIKey string
	Ref    *refserver.Server
	HTTP   *httptest.Server
	Clock  *refserver.FakeClock
	tb     testing.TB
}

const testKey = "poll-test-key"

func newTestServer(t testing.TB, opts ...refserver.Option) *testServer {
	t.Helper()
	clock := refserver.NewFakeClock(time.Date(2026, time.January, 5, 9, 0, 0, 0, time.UTC))
	defaults := []refserver.Option{
		refserver.WithClock(clock),
		refserver.WithRenderScale(0.01),
		refserver.WithProject(testKey, 100),
		refserver.WithAllowHTTPWebhooks(),
	}
	ref := refserver.New(append(defaults, opts...)...)
	hs := httptest.NewServer(ref)
	t.Cleanup(func() {
		hs.Close()
		ref.Close()
	})
	return &testServer{URL: hs.URL, APIKey: testKey, Ref: ref, HTTP: hs, Clock: clock, tb: t}
}

// Client returns a client of the test project with fast retries.
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

// Balance returns the test project's balance.
func (s *testServer) Balance() float64 { return s.Ref.Balance(s.APIKey) }
