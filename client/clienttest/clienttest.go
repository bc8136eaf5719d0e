// Package clienttest runs the reference server in-process for tests of code
// that uses package client: a real, stateful implementation of the whole
// service (balances, charges and refunds, generation lifecycles, voices,
// templates, uploads, webhooks) driven by a fake clock.
//
//	func TestRender(t *testing.T) {
//		srv := clienttest.NewServer(t)
//		c := srv.Client()
//		g, err := c.CreateGeneration(ctx, client.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: "a lighthouse"})
//		...
//		srv.Advance(time.Minute) // the render finishes
//	}
//
// Webhook events are delivered for real. Receivers may be plain-http servers
// on loopback (httptest); deliveries are signed with Server.WebhookSecret and
// stamped by the fake clock, so verify them with webhook.WithNow(srv.Clock.Now).
package clienttest

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/refserver"
)

// Defaults of [NewServer].
const (
	// APIKey is the key of the project NewServer creates.
	APIKey = "mg_test_4f9c2a7b1e8d6053"
	// Balance is that project's starting balance, USD.
	Balance = 100.0
)

// Start is the time the fake clock of [NewServer] shows at first. It is
// fixed, so tests see the same dates on every run.
var Start = time.Date(2026, time.January, 5, 9, 0, 0, 0, time.UTC)

// Server is a reference server listening on a local port.
type Server struct {
	URL           string           // base URL, for client.WithBaseURL
	APIKey        string           // key of the default project
	WebhookSecret string           // secret the default project's webhooks are signed with
	Clock         *FakeClock       // the server's clock; move it with Advance
	Ref           *ReferenceServer // the server itself, for balances, projects and settling
	HTTP          *httptest.Server // the listener

	tb testing.TB
}

// NewServer starts a reference server whose clock is a fake one at [Start],
// whose renders take 1/100 of their real time, and which holds one project
// with key [APIKey] and [Balance] USD. opts are applied after those defaults,
// so they override them. The server is closed when the test ends.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	clock := refserver.NewFakeClock(Start)
	defaults := []refserver.Option{
		refserver.WithClock(clock),
		refserver.WithRenderScale(0.01),
		refserver.WithProject(APIKey, Balance),
		refserver.WithAllowHTTPWebhooks(), // receivers in tests are httptest servers on loopback
	}
	ref := refserver.New(append(defaults, opts...)...)
	hs := httptest.NewServer(ref)
	t.Cleanup(func() {
		hs.Close()
		ref.Close()
	})
	s := &Server{URL: hs.URL, APIKey: APIKey, Clock: clock, Ref: ref, HTTP: hs, tb: t}
	if p, ok := ref.Project(APIKey); ok {
		s.WebhookSecret = p.WebhookSecret
	}
	return s
}

// Client returns a client of the default project with fast retries (waits of
// 1 to 10 ms). opts are applied after those, so they override them. It
// fails the test if the client cannot be built.
func (s *Server) Client(opts ...client.Option) *client.Client {
	defaults := []client.Option{
		client.WithBaseURL(s.URL),
		client.WithHTTPClient(s.HTTP.Client()),
		client.WithRetryWait(time.Millisecond, 10*time.Millisecond),
	}
	c, err := client.New(s.APIKey, append(defaults, opts...)...)
	if err != nil {
		s.tb.Fatalf("clienttest: %v", err)
	}
	return c
}

// Advance moves the fake clock forward by d and settles the server, so every
// render, training, refund, webhook and expiry due by then has happened.
func (s *Server) Advance(d time.Duration) {
	s.Clock.Advance(d)
	s.Ref.Settle()
}

// Balance returns the default project's balance in USD, refunds due counted.
func (s *Server) Balance() float64 {
	return s.Ref.Balance(s.APIKey)
}
