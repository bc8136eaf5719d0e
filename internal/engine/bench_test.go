package engine

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/mediagen/mediagen-go/internal/benchpair"
	"github.com/mediagen/mediagen-go/internal/retry"
)

// BenchmarkPairEngineRetryablehttp holds the engine's loop against
// go-retryablehttp doing the same work: a GET on loopback with a 60 s
// per-attempt bound, retried on the same rule, its answer decoded. The
// retryablehttp side is built as the client needed it to carry per-call
// settings without context values: a retryablehttp.Client per call whose
// CheckRetry and Backoff close over the call, the backoff sleeping on the
// call's clock.
func BenchmarkPairEngineRetryablehttp(b *testing.B) {
	body := []byte(`{"generation":{"id":"gen_1","status":"done","feature":"image/generation","params":{"prompt":"a heron"}}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	b.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL + "/v3/generations/gen_1")
	if err != nil {
		b.Fatal(err)
	}
	hc := srv.Client()
	call := &Call{Timeout: time.Minute, Retry: retry.Policy{MaxRetries: 4, WaitMin: 500 * time.Millisecond, WaitMax: 10 * time.Second},
		UserAgent: []string{"bench"}, Logger: slog.New(slog.DiscardHandler), Clock: retry.Wall}
	e := New(hc, "key-123456", nil)
	ctx := context.Background()
	decode := func(resp *http.Response) error {
		var out struct{ Generation map[string]any }
		return json.NewDecoder(resp.Body).Decode(&out)
	}
	engineSide := func(b *testing.B) {
		r := Request{Method: http.MethodGet, URL: *u}
		if err := e.Do(ctx, call, &r, decode); err != nil {
			b.Fatal(err)
		}
	}
	rhSide := func(b *testing.B) {
		policy := call.Retry
		rc := &retryablehttp.Client{
			HTTPClient:   hc,
			RetryWaitMin: policy.WaitMin, RetryWaitMax: policy.WaitMax, RetryMax: policy.MaxRetries,
			CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
				if ctx.Err() != nil {
					return false, ctx.Err()
				}
				if err != nil {
					return retryableTransportError(err), nil
				}
				return retry.TransientStatus(resp.StatusCode), nil
			},
			Backoff: func(lo, hi time.Duration, n int, resp *http.Response) time.Duration {
				d := retry.Backoff(lo, hi, n)
				if a, ok := retry.After(resp, call.Clock.Now()); ok {
					d = a
				}
				_ = call.Clock.Sleep(ctx, d) // on the call's clock
				return 0
			},
			ErrorHandler: retryablehttp.PassthroughErrorHandler,
		}
		actx, cancel := context.WithTimeout(ctx, call.Timeout)
		defer cancel()
		req, err := retryablehttp.NewRequestWithContext(actx, http.MethodGet, u.String(), nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header["Authorization"] = e.auth
		req.Header["User-Agent"] = call.UserAgent
		resp, err := rc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if err := decode(resp); err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	benchpair.Run(b, [2]benchpair.Side{{Name: "engine", Run: engineSide}, {Name: "retryablehttp", Run: rhSide}})
}
