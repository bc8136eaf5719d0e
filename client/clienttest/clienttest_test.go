package clienttest_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/webhook"
)

func TestNewServerDefaults(t *testing.T) {
	srv := clienttest.NewServer(t)
	assert.Equal(t, clienttest.APIKey, srv.APIKey())
	assert.NotEmpty(t, srv.WebhookSecret())
	assert.Equal(t, clienttest.Balance, srv.Balance())
	assert.Equal(t, clienttest.StartTime, srv.Now())

	resp, err := http.Get(srv.URL() + "/v3/pricing")
	require.NoError(t, err)
	_ = resp.Body.Close()
	date, err := http.ParseTime(resp.Header.Get("Date"))
	require.NoError(t, err)
	assert.Equal(t, clienttest.StartTime, date.UTC(), "Date comes from the fake clock")
}

func TestAdvanceFinishesRenders(t *testing.T) {
	srv := clienttest.NewServer(t)
	c := srv.Client()
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "p"})
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusPending, g.Status)
	assert.Equal(t, clienttest.StartTime, g.RequestDate)

	srv.Advance(time.Minute)
	g, err = c.GetGeneration(t.Context(), g.ID)
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, g.Status)
	assert.InDelta(t, clienttest.Balance-g.BalanceUsed, srv.Balance(), 1e-9)
}

func TestOptionsOverrideDefaults(t *testing.T) {
	srv := clienttest.NewServer(t,
		clienttest.WithBalance(0.5),
		clienttest.WithOutcome(func(mediagen.Feature) clienttest.Outcome { return clienttest.OutcomeError }),
	)
	assert.Equal(t, 0.5, srv.Balance())
	c := srv.Client(client.WithUserAgent("test/1"))
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "p"})
	require.NoError(t, err)
	srv.Advance(time.Minute)
	g, err = c.GetGeneration(t.Context(), g.ID)
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusError, g.Status)
	assert.Equal(t, 0.5, srv.Balance(), "refunded")
}

// A user's receiver, built with package webhook, gets the signed event of a
// generation made through the client; the fake clock signs and verifies.
func TestWebhookReachesAReceiverInTheTest(t *testing.T) {
	srv := clienttest.NewServer(t)
	events := make(chan *webhook.Event, 4)
	h, err := webhook.Handler(srv.WebhookSecret(), func(_ context.Context, ev *webhook.Event) error {
		events <- ev
		return nil
	}, webhook.WithNow(srv.Now))
	require.NoError(t, err)
	receiver := httptest.NewServer(h)
	defer receiver.Close()

	c := srv.Client()
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse at dusk"}, client.WithWebhookURL(receiver.URL+"/hooks"))
	require.NoError(t, err)
	srv.Advance(time.Minute)

	select {
	case ev := <-events:
		assert.Equal(t, webhook.EventGenerationDone, ev.Name)
		require.NotNil(t, ev.Generation)
		assert.Equal(t, g.ID, ev.Generation.ID)
		assert.Equal(t, mediagen.GenerationStatusDone, ev.Generation.Status)
		require.NotNil(t, ev.Generation.Output)
		assert.Equal(t, "image/png", ev.Generation.Output.MIME)
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook event arrived")
	}
	srv.WaitDeliveries()
	assert.Empty(t, events, "one event per generation")
}

// Everything a test in another module needs is reachable through clienttest
// alone: this test names no internal package.
func TestOptionsWithoutTheInternalPackage(t *testing.T) {
	srv := clienttest.NewServer(t,
		clienttest.WithBalance(1),
		clienttest.WithProject("other-key", 5),
		clienttest.WithOutcome(func(feature mediagen.Feature) clienttest.Outcome {
			if feature == mediagen.FeatureImageGeneration {
				return clienttest.OutcomeTimeout
			}
			return clienttest.OutcomeDone
		}),
		clienttest.WithFaults(clienttest.Faults{Seed: 1}),
	)
	assert.Equal(t, 1.0, srv.Balance())
	assert.Equal(t, 5.0, srv.BalanceOf("other-key"))

	c := srv.Client()
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "p"})
	require.NoError(t, err)
	srv.Advance(time.Minute)
	g, err = c.GetGeneration(t.Context(), g.ID)
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusTimeout, g.Status)
	assert.Equal(t, 1.0, srv.Balance(), "a timed-out render is refunded")

	require.NoError(t, srv.SetFaults(clienttest.Faults{Seed: 1, HTTPStatus: 1, Statuses: []int{503}}))
	_, err = c.GetGeneration(t.Context(), g.ID)
	var apiErr *client.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 503, apiErr.StatusCode, "every answer replaced, after the client's retries")
	assert.Positive(t, srv.FaultCounts().Replaced)
	require.NoError(t, srv.SetFaults(clienttest.Faults{}))
	_, err = c.GetGeneration(t.Context(), g.ID)
	require.NoError(t, err)
}

// Handler serves the same server from a listener of the test's: under a
// path prefix, with /storage/ routed to it for the asset URLs, and over
// TLS.
func TestHandlerServesFromTheTestsListener(t *testing.T) {
	srv := clienttest.NewServer(t)
	mux := http.NewServeMux()
	mux.Handle("/prefix/", http.StripPrefix("/prefix", srv.Handler()))
	mux.Handle("/storage/", srv.Handler())
	prefixed := httptest.NewServer(mux)
	defer prefixed.Close()

	c := srv.Client(client.WithBaseURL(prefixed.URL + "/prefix"))
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"})
	require.NoError(t, err)
	srv.Advance(time.Minute)
	g, err = srv.Client().GetGeneration(t.Context(), g.ID)
	require.NoError(t, err, "the same server as srv.URL's")
	require.Equal(t, mediagen.GenerationStatusDone, g.Status)
	g, err = c.GetGeneration(t.Context(), g.ID)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(g.Output.URL(), prefixed.URL+"/storage/"), "asset URLs on the host asked, without the prefix: %s", g.Output.URL())
	var buf bytes.Buffer
	require.NoError(t, c.Download(t.Context(), g.Output.URL(), &buf))
	assert.NotZero(t, buf.Len())

	secure := httptest.NewTLSServer(srv.Handler())
	defer secure.Close()
	tc := srv.Client(client.WithBaseURL(secure.URL), client.WithHTTPClient(secure.Client()))
	g, err = tc.GetGeneration(t.Context(), g.ID)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(g.Output.URL(), "https://"), g.Output.URL())
	require.NoError(t, tc.Download(t.Context(), g.Output.URL(), io.Discard))
}

// On the wall clock the server reads real time, Advance sleeps, and the
// server's clients wait for real: poll's first check comes after a second.
func TestWallClock(t *testing.T) {
	_, err := clienttest.Start(clienttest.WithWallClock(), clienttest.WithStartTime(clienttest.StartTime))
	require.ErrorContains(t, err, "WithWallClock")

	srv := clienttest.NewServer(t, clienttest.WithWallClock())
	assert.WithinDuration(t, time.Now(), srv.Now(), time.Second)
	resp, err := http.Get(srv.URL() + "/v3/pricing")
	require.NoError(t, err)
	_ = resp.Body.Close()
	date, err := http.ParseTime(resp.Header.Get("Date"))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), date, 2*time.Second, "Date comes from the wall clock")

	start := time.Now()
	srv.Advance(50 * time.Millisecond)
	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond, "Advance sleeps")

	c := srv.Client()
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"})
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), g.RequestDate, 2*time.Second)
	start = time.Now()
	g, err = poll.Generation(t.Context(), c, g.ID)
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, g.Status)
	assert.GreaterOrEqual(t, time.Since(start), time.Second, "images: first check after 1 s of real time")
	assert.Less(t, time.Since(start), 5*time.Second)
}

// A client the code under test builds itself, on the wall clock, sees an
// image render finish within 2 s against a server on the wall clock.
func TestAClientOfYourOwnSeesRendersFinish(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.WithWallClock())
	c, err := client.New(srv.APIKey(), client.WithBaseURL(srv.URL()))
	require.NoError(t, err)
	start := time.Now()
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a kite"})
	require.NoError(t, err)
	g, err = poll.Generation(t.Context(), c, g.ID)
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, g.Status)
	assert.Less(t, time.Since(start), 2*time.Second)
}

// Advance starts the webhook deliveries of what it settled; WaitDeliveries
// returns once each has ended, its retry included.
func TestWaitDeliveriesEndsWhatAdvanceStarted(t *testing.T) {
	srv := clienttest.NewServer(t)
	var attempts, refused atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if attempts.Add(1) == 1 {
			refused.Add(1)
			w.WriteHeader(http.StatusInternalServerError) // the first delivery is retried
		}
	}))
	defer receiver.Close()
	c := srv.Client()
	for range 5 {
		_, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "p"}, client.WithWebhookURL(receiver.URL))
		require.NoError(t, err)
	}
	srv.Advance(time.Minute)
	srv.WaitDeliveries()
	assert.Equal(t, int32(6), attempts.Load(), "five deliveries and one retry, all ended")
	assert.Equal(t, int32(1), refused.Load())
}

// Faults as their godoc says: statuses 500, 502 and 503 by default, a
// Retry-After on a 429 only, and /v3/ alone faulted unless Paths says.
func TestFaultsAsDocumented(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.WithFaults(clienttest.Faults{Seed: 3, HTTPStatus: 1}))
	get := func(path string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, srv.URL()+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", srv.APIKey())
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp
	}
	seen := map[int]bool{}
	for range 40 {
		resp := get("/v3/pricing")
		seen[resp.StatusCode] = true
		assert.Empty(t, resp.Header.Get("Retry-After"))
	}
	assert.Equal(t, map[int]bool{500: true, 502: true, 503: true}, seen)
	assert.Empty(t, get("/storage/none").Header.Get("X-Injected-Fault"), "storage is not faulted by default")

	require.NoError(t, srv.SetFaults(clienttest.Faults{HTTPStatus: 1, Statuses: []int{429}}))
	resp := get("/v3/pricing")
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"), "at least 1 s")
}

// WithOutcome takes the place of the render faults, as its godoc says.
func TestWithOutcomeReplacesRenderFaults(t *testing.T) {
	srv := clienttest.NewServer(t,
		clienttest.WithOutcome(func(mediagen.Feature) clienttest.Outcome { return clienttest.OutcomeDone }),
		clienttest.WithFaults(clienttest.Faults{Seed: 1, RenderError: 1}))
	c := srv.Client()
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "p"})
	require.NoError(t, err)
	g, err = poll.Generation(t.Context(), c, g.ID)
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, g.Status)
	assert.Zero(t, srv.FaultCounts().RenderErrors)
}
