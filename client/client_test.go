package client_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/testlog"
)

func TestNewReadsTheEnvironment(t *testing.T) {
	srv := clienttest.NewServer(t)
	t.Setenv(client.EnvAPIKey, srv.APIKey())
	t.Setenv(client.EnvBaseURL, srv.URL())

	c, err := client.New("")
	require.NoError(t, err)
	_, err = c.Pricing(t.Context())
	require.NoError(t, err, "key and base URL came from the environment")

	c, err = client.New("mg_other_key_0000", client.WithBaseURL(srv.URL()))
	require.NoError(t, err)
	_, err = c.Pricing(t.Context())
	require.ErrorIs(t, err, client.ErrUnauthorized, "an explicit key wins over the environment")
}

func TestRequestsCarryKeyAndUserAgent(t *testing.T) {
	type seen struct{ auth, ua, path string }
	var mu sync.Mutex
	var got []seen
	srv := clienttest.NewServer(t)
	ref := srv.Handler()
	// Mounted under a path prefix: a request that ignores the base URL's
	// path (an absolute-path bug) misses the server.
	mux := http.NewServeMux()
	mux.Handle("/prefix/", http.StripPrefix("/prefix", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, seen{r.Header.Get("Authorization"), r.Header.Get("User-Agent"), r.URL.Path})
		mu.Unlock()
		ref.ServeHTTP(w, r)
	})))
	prefixed := httptest.NewServer(mux)
	t.Cleanup(prefixed.Close)

	for _, base := range []string{prefixed.URL + "/prefix", prefixed.URL + "/prefix/v3/"} {
		c, err := client.New(srv.APIKey(), client.WithBaseURL(base))
		require.NoError(t, err)
		_, err = c.Pricing(t.Context())
		require.NoError(t, err, base)
	}
	c, err := client.New(srv.APIKey(), client.WithBaseURL(prefixed.URL+"/prefix"), client.WithUserAgent("my-app/2.0"))
	require.NoError(t, err)
	_, err = c.Templates(t.Context(), client.TemplateFilter{})
	require.NoError(t, err)
	_, err = c.Templates(t.Context(), client.TemplateFilter{}, client.WithUserAgent("my-app/2.0 (nightly batch)"))
	require.NoError(t, err)
	_, err = c.Templates(t.Context(), client.TemplateFilter{})
	require.NoError(t, err)

	require.Len(t, got, 5)
	for _, s := range got {
		assert.Equal(t, srv.APIKey(), s.auth, "the raw key, no Bearer prefix")
	}
	assert.Equal(t, "mediagen-go/"+client.Version, got[0].ua)
	assert.Equal(t, "/v3/pricing", got[1].path)
	assert.Equal(t, "my-app/2.0", got[2].ua)
	assert.Equal(t, "my-app/2.0 (nightly batch)", got[3].ua, "per call")
	assert.Equal(t, "my-app/2.0", got[4].ua)
}

func TestDownloadNeverSendsTheKey(t *testing.T) {
	var auth []string
	var mu sync.Mutex
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(storage.Close)
	c, err := client.New("mg_key_123456", client.WithBaseURL(storage.URL), client.WithRetryWait(time.Millisecond, 2*time.Millisecond),
		client.WithHeader("X-Trace", "t1"))
	require.NoError(t, err)

	err = c.Download(t.Context(), storage.URL+"/storage/x?signature=s", io.Discard)
	var se *client.StorageError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusServiceUnavailable, se.StatusCode)
	assert.NotContains(t, err.Error(), "signature=s", "the signed query is a credential")
	assert.Equal(t, []string{"", "", "", "", ""}, auth, "a transient failure is retried, never with Authorization")

	auth = nil
	err = c.Download(t.Context(), storage.URL+"/storage/x", io.Discard, client.WithMaxRetries(0))
	require.ErrorAs(t, err, &se)
	assert.Equal(t, []string{""}, auth, "per-call retries")
}

// TestKeyNeverInErrorsOrLogs forces every error type with a logger at Debug
// and looks for the key everywhere.
func TestKeyNeverInErrorsOrLogs(t *testing.T) {
	logger, logs := testlog.DebugTextLogger()
	srv, _, ctx := setup(t, clienttest.WithOutcome(func(mediagen.Feature) clienttest.Outcome { return clienttest.OutcomeError }))
	c := srv.Client(client.WithLogger(logger))
	img := uploadPNG(t, ctx, c)

	var errs []error
	collect := func(err error) {
		require.Error(t, err)
		errs = append(errs, err)
	}
	_, err := c.CreateGeneration(ctx, client.ProductShotArgs{Image: "nope", Prompt: "p"}) // 400
	collect(err)
	_, err = c.CreateGeneration(ctx, client.SelfPortraitArgs{Image: img, Prompt: "p"}) // 403
	collect(err)
	_, err = c.GetGeneration(ctx, "gen_missing") // 404
	collect(err)
	srv.SetBalance(0)
	_, err = c.CreateGeneration(ctx, client.AdArgs{Image: img, Prompt: "p"}) // 402
	collect(err)
	_, err = c.CreateGeneration(ctx, client.LogoRevealArgs{Image: img, Prompt: "p", Mode: "up"}) // client check
	collect(err)

	wrong, err := client.New(srv.APIKey()+"x", client.WithBaseURL(srv.URL()), client.WithLogger(logger))
	require.NoError(t, err)
	_, err = wrong.Voices(ctx, client.VoiceFilter{}) // 401
	collect(err)

	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"echo: ` + r.Header.Get("Authorization") + `"}}`))
	}))
	t.Cleanup(down.Close)
	// The search after the ambiguous 503 keeps trying for SearchBudget: on a
	// test clock, those minutes take no wall time.
	echo, err := client.New(srv.APIKey(), client.WithBaseURL(down.URL), client.WithLogger(logger), client.WithMaxRetries(1), client.WithRetryWait(0, time.Millisecond),
		newTestClock().Option())
	require.NoError(t, err)
	_, err = echo.GetGeneration(ctx, "gen_1") // 5xx that echoes the key
	collect(err)
	_, err = echo.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "p"}) // uncertain: the search fails too
	var uncertain *client.UncertainError
	require.ErrorAs(t, err, &uncertain)
	collect(err)
	down.Close()
	_, err = echo.Pricing(ctx) // connection refused
	collect(err)

	kinds := map[string]bool{}
	for _, err := range errs {
		assert.NotContains(t, err.Error(), srv.APIKey())
		var apiErr *client.APIError
		if errors.As(err, &apiErr) {
			assert.NotContains(t, string(apiErr.Body), srv.APIKey())
			kinds[apiErr.Code] = true
		}
	}
	for _, code := range []string{"invalid_argument", "permission_required", "not_found", "insufficient_balance", "unauthorized", "unavailable"} {
		assert.True(t, kinds[code], "error %s was forced", code)
	}
	assert.NotEmpty(t, logs.String())
	assert.Contains(t, logs.String(), "level=DEBUG")
	assert.NotContains(t, logs.String(), srv.APIKey())
}

func TestLogsCarryNoQuery(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // every request fails to connect
	logger, logs := testlog.DebugTextLogger()
	c, err := client.New("mg_key_123456", client.WithBaseURL(down.URL), client.WithMaxRetries(0), client.WithLogger(logger))
	require.NoError(t, err)
	_, err = c.ListGenerations(t.Context(), client.ListParams{Feature: "logo-reveal", Cursor: "c_private_cursor"})
	require.Error(t, err)
	assert.Contains(t, logs.String(), "path=/v3/generations")
	assert.NotContains(t, logs.String(), "c_private_cursor")
}
