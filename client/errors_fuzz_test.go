package client

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzNewAPIError feeds error answers as a hostile service or proxy could
// send them. The error built from them must never panic, never carry the API
// key, and never report a negative Retry-After.
func FuzzNewAPIError(f *testing.F) {
	f.Add(400, []byte(`{"error":{"code":"invalid_argument","message":"args.duration must be an integer from 3 to 10"}}`), "")
	f.Add(402, []byte(`{"error":{"code":"insufficient_balance","message":"short","required":0.5,"balance":0.1}}`), "")
	f.Add(429, []byte(`{"error":{"code":"rate_limited","message":"5 voices training"}}`), "7")
	f.Add(503, []byte("<html>upstream mg_live_fuzzkey123 failed</html>"), "Wed, 21 Oct 2015 07:28:00 GMT")
	f.Add(429, []byte(`{"error":{"code":"rate_limited","message":"mg_live_fuzzkey123"}}`), "99999999999999")
	f.Add(500, []byte(`{"error":"not an object"}`), "-1")
	f.Add(401, []byte{0xff, 0xfe, 0x00}, "1e3")
	const key = "mg_live_fuzzkey123"
	f.Fuzz(func(t *testing.T, status int, body []byte, retryAfter string) {
		if status < 100 || status > 999 {
			return
		}
		h := http.Header{}
		h.Set("Retry-After", retryAfter)
		err := newAPIError(answer(status, "", h), body, key, time.Now())
		var apiErr *APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("newAPIError returned %T, not an *APIError", err)
		}
		if apiErr.StatusCode != status {
			t.Fatalf("status %d, want %d", apiErr.StatusCode, status)
		}
		for _, s := range []string{err.Error(), apiErr.Message, apiErr.Code, string(apiErr.Body)} {
			if strings.Contains(s, key) {
				t.Fatalf("the API key leaked into %q", s)
			}
		}
		if apiErr.RetryAfter < 0 {
			t.Fatalf("negative RetryAfter %v from %q", apiErr.RetryAfter, retryAfter)
		}
		if len(apiErr.Body) > maxErrorBody {
			t.Fatalf("body of %d bytes kept, cap is %d", len(apiErr.Body), maxErrorBody)
		}
	})
}
