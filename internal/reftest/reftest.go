// Package reftest starts the reference server for the module's own tests
// (client, poll): unlike package clienttest it exposes the server itself
// (faults, balances, projects), its listener and its fake clock, and takes
// any refserver option.
package reftest

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/refserver"
)

// Server is a reference server over loopback on a fake clock that starts at
// clienttest.StartTime, with one project (clienttest.APIKey, holding
// clienttest.Balance) and renders 100 times faster than the service's.
type Server struct {
	URL, APIKey, WebhookSecret string
	Ref                        *refserver.Server
	HTTP                       *httptest.Server
	Clock                      *refserver.FakeClock
	tb                         testing.TB
}

// New starts a Server with opts on top of its defaults, closed with the
// test.
func New(tb testing.TB, opts ...refserver.Option) *Server {
	tb.Helper()
	clock := refserver.NewFakeClock(clienttest.StartTime)
	defaults := []refserver.Option{
		refserver.WithClock(clock),
		refserver.WithRenderScale(0.01),
		refserver.WithProject(clienttest.APIKey, clienttest.Balance),
		refserver.WithAllowHTTPWebhooks(),
	}
	ref := refserver.New(append(defaults, opts...)...)
	hs := httptest.NewServer(ref)
	tb.Cleanup(func() {
		hs.Close()
		ref.Close()
	})
	s := &Server{URL: hs.URL, APIKey: clienttest.APIKey, Ref: ref, HTTP: hs, Clock: clock, tb: tb}
	if p, ok := ref.Project(clienttest.APIKey); ok {
		s.WebhookSecret = p.WebhookSecret
	}
	return s
}

// Client returns a client of the default project with fast retries (waits
// of 1 to 10 ms) and opts on top.
func (s *Server) Client(opts ...client.Option) *client.Client {
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
func (s *Server) Advance(d time.Duration) {
	s.Clock.Advance(d)
	s.Ref.Settle()
}

// Balance returns the default project's balance.
func (s *Server) Balance() float64 { return s.Ref.Balance(s.APIKey) }
