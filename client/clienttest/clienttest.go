// Package clienttest runs the reference server in-process for tests of code
// that uses package client: a real, stateful implementation of the whole
// service (balances, charges and refunds, generation lifecycles, voices,
// templates, uploads, webhooks) on a fake clock.
//
//	func TestRender(t *testing.T) {
//		srv := clienttest.NewServer(t)
//		c := srv.Client()
//		g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"})
//		require.NoError(t, err)
//		g, err = poll.Generation(t.Context(), c, g.ID) // returns at once: see below
//		require.NoError(t, err)
//	}
//
// Programs and Example functions, which have no testing.TB, use [Start].
//
// # Time
//
// The server's clock is a fake one that starts at [StartTime] and moves only
// when something moves it: [Server.Advance], or a wait (a poll interval, a
// retry backoff) of a client [Server.Client] returns, which advances the
// clock instead of sleeping. So code that submits and waits finishes in
// milliseconds, while a GetGeneration right after CreateGeneration still
// sees pending. Concurrent waits each move the clock: expect the order of
// times after waits, not exact times. [WithWallClock] runs on real time.
//
// Webhook events are delivered for real, to plain-http receivers on loopback
// too (httptest), signed with the server's secret and stamped by its clock:
// verify them with webhook.WithNow(srv.Now).
package clienttest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/refserver"
	"github.com/mediagen/mediagen-go/internal/retry"
)

// Defaults of [Start] and [NewServer].
const (
	// APIKey is the key of the project the server starts with.
	APIKey = "mg_test_4f9c2a7b1e8d6053"
	// Balance is that project's starting balance, USD.
	Balance = 100.0
)

// StartTime is the time the fake clock shows at first, the same every run.
var StartTime = time.Date(2026, time.January, 5, 9, 0, 0, 0, time.UTC)

// Server is a reference server listening on a loopback port, with one
// project to begin with. It is safe for concurrent use.
type Server struct {
	clock *refserver.FakeClock // nil on the wall clock (WithWallClock)
	ref   *refserver.Server
	hs    *httptest.Server
	tb    testing.TB // nil for a server from Start
}

// Start starts a reference server on a fake clock at [StartTime], whose
// renders take 1/100 of their real time, holding one project with key
// [APIKey] and [Balance] USD; opts change those. Close it when done.
func Start(opts ...Option) (*Server, error) {
	cfg := config{balance: Balance, scale: 0.01, start: StartTime}
	var errs []error
	for _, o := range opts {
		if o != nil {
			errs = append(errs, o(&cfg)) // Join drops the nils
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.wall && cfg.startSet {
		return nil, errors.New("clienttest: WithStartTime and WithWallClock: the wall clock cannot start at another time")
	}
	ropts := append([]refserver.Option{
		refserver.WithRenderScale(cfg.scale),
		refserver.WithProject(APIKey, cfg.balance),
		refserver.WithAllowHTTPWebhooks(),         // receivers in tests are httptest servers on loopback
		refserver.WithFaults(cfg.faults.config()), // cannot panic: WithFaults validated them
	}, cfg.more...)
	var clock *refserver.FakeClock
	if !cfg.wall {
		clock = refserver.NewFakeClock(cfg.start)
		ropts = append(ropts, refserver.WithClock(clock))
	}
	ref := refserver.New(ropts...)
	return &Server{clock: clock, ref: ref, hs: httptest.NewServer(ref)}, nil
}

// NewServer is [Start] for a test: it fails the test when the server cannot
// start, and closes the server when the test ends.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Start(opts...)
	if err != nil {
		t.Fatal(err)
	}
	s.tb = t
	t.Cleanup(s.Close)
	return s
}

// Close stops the server and its background work.
func (s *Server) Close() {
	s.hs.Close()
	s.ref.Close()
}

// URL returns the base URL, for client.WithBaseURL.
func (s *Server) URL() string { return s.hs.URL }

// Handler returns the server's HTTP handler (the one [Server.URL] reaches),
// to serve from a listener of the test's own: under a path prefix, behind
// middleware, over TLS. The upload and asset URLs it issues are absolute on
// the request's host, without any prefix: route /storage/ there to it too.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.ref.ServeHTTP) }

// APIKey returns the key of the default project.
func (s *Server) APIKey() string { return APIKey }

// WebhookSecret returns the secret the default project's webhooks are
// signed with.
func (s *Server) WebhookSecret() string {
	p, _ := s.ref.Project(APIKey) // always there: projects are never removed
	return p.WebhookSecret
}

// Client returns a client of the default project with fast retries (1 to
// 10 ms) whose waits move the server's clock; opts apply after those.
// Invalid options fail the test of a [NewServer] server; on a [Start]
// server Client is [Server.MustClient] ([Server.ClientFor] returns the error).
func (s *Server) Client(opts ...client.Option) *client.Client {
	if s.tb == nil {
		return s.MustClient(opts...)
	}
	s.tb.Helper()
	c, err := s.ClientFor(APIKey, opts...)
	if err != nil {
		s.tb.Fatal(clientError(err))
	}
	return c
}

// MustClient is [Server.Client] for a program with no test to fail: it
// panics when an option is invalid.
func (s *Server) MustClient(opts ...client.Option) *client.Client {
	c, err := s.ClientFor(APIKey, opts...)
	if err != nil {
		panic(clientError(err))
	}
	return c
}

func clientError(err error) error {
	return fmt.Errorf("clienttest: Server.Client: invalid client option: %w", errors.Unwrap(err))
}

// ClientFor returns a client of the project of apiKey, configured as
// [Server.Client] configures its own.
func (s *Server) ClientFor(apiKey string, opts ...client.Option) (*client.Client, error) {
	defaults := []client.Option{
		client.WithBaseURL(s.hs.URL),
		client.WithHTTPClient(s.hs.Client()),
		client.WithRetryWait(time.Millisecond, 10*time.Millisecond),
		client.WithClock(serverClock{s}),
	}
	c, err := client.New(apiKey, append(defaults, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("clienttest: %w", err)
	}
	return c, nil
}

// serverClock is the server's clock, for its clients: a wait advances it.
type serverClock struct{ s *Server }

func (c serverClock) Now() time.Time { return c.s.Now() }

func (c serverClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.s.clock == nil { // the wall clock: wait for real, then settle as Advance does
		err := retry.Sleep(ctx, d)
		c.s.ref.Settle()
		return err
	}
	if d > 0 {
		c.s.Advance(d)
	}
	return ctx.Err()
}

// Now returns the time on the server's clock.
func (s *Server) Now() time.Time {
	if s.clock == nil {
		return time.Now()
	}
	return s.clock.Now()
}

// Advance moves the server's clock forward by d and settles the server, so
// every render, refund and expiry due by then has happened and its webhook
// deliveries have started ([Server.WaitDeliveries] waits for them). On a
// [WithWallClock] server it sleeps for d, then settles.
func (s *Server) Advance(d time.Duration) {
	if s.clock == nil {
		_ = retry.Sleep(context.Background(), d)
	} else {
		s.clock.Advance(d)
	}
	s.ref.Settle()
}

// Balance returns the default project's balance in USD, refunds due counted.
func (s *Server) Balance() float64 { return s.ref.Balance(APIKey) }

// BalanceOf returns the balance of the project of apiKey.
func (s *Server) BalanceOf(apiKey string) float64 { return s.ref.Balance(apiKey) }

// SetBalance sets the default project's balance in USD.
func (s *Server) SetBalance(usd float64) { s.ref.SetBalance(APIKey, usd) }

// AddProject adds a project, for tests of tenant isolation, and returns its
// webhook secret.
func (s *Server) AddProject(apiKey string, balance float64) string {
	return s.ref.AddProject(apiKey, balance).WebhookSecret
}

// RotateWebhookSecret gives the default project a new webhook secret and
// returns it; for 24 hours deliveries are signed with the old one too.
func (s *Server) RotateWebhookSecret() string {
	p, _ := s.ref.RotateWebhookSecret(APIKey)
	return p.WebhookSecret
}

// RetireVoice retires a catalog voice, by id or slug: every route then
// answers 404 for it.
func (s *Server) RetireVoice(idOrSlug string) error {
	if !s.ref.RetireVoice(idOrSlug) {
		return fmt.Errorf("clienttest: no live catalog voice %q", idOrSlug)
	}
	return nil
}

// SetFaults replaces the faults the server injects from now on; the zero
// Faults injects nothing.
func (s *Server) SetFaults(f Faults) error {
	if err := s.ref.Faults().SetConfig(f.config()); err != nil {
		return fmt.Errorf("clienttest: %w", err)
	}
	return nil
}

// FaultCounts returns how many faults the server has injected so far.
func (s *Server) FaultCounts() FaultCounts {
	return FaultCounts(s.ref.Faults().Stats())
}

// WaitDeliveries waits until every webhook delivery due so far was sent,
// its retry included.
func (s *Server) WaitDeliveries() { s.ref.WaitDeliveries() }

// config is what the options configure.
type config struct {
	balance, scale float64
	start          time.Time
	startSet, wall bool // WithStartTime, WithWallClock
	faults         Faults
	more           []refserver.Option // of WithProject and WithOutcome
}
