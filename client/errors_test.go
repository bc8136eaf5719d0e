package client

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/redact"
)

func answer(status int, body string, header http.Header) *http.Response {
	u, _ := url.Parse("https://api.example.com/v3/generations/gen_1?cursor=x")
	if header == nil {
		header = http.Header{}
	}
	return &http.Response{StatusCode: status, Header: header, Request: &http.Request{Method: http.MethodGet, URL: u}}
}

func TestNewAPIError(t *testing.T) {
	t.Run("service error", func(t *testing.T) {
		err := newAPIError(answer(404, `{"error":{"code":"not_found","message":"no such generation"}}`, nil), []byte(`{"error":{"code":"not_found","message":"no such generation"}}`), "secret-key", time.Now())
		var apiErr *APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 404, apiErr.StatusCode)
		assert.Equal(t, "not_found", apiErr.Code)
		assert.Equal(t, "no such generation", apiErr.Message)
		assert.Equal(t, "GET", apiErr.Method)
		assert.Equal(t, "/v3/generations/gen_1", apiErr.Path, "path only, no query")
		assert.Equal(t, "mediagen: GET /v3/generations/gen_1: 404 not_found: no such generation", err.Error())
	})
	t.Run("402 carries the amounts", func(t *testing.T) {
		body := `{"error":{"code":"insufficient_balance","message":"too poor","required":1.5,"balance":0.25}}`
		err := newAPIError(answer(402, body, nil), []byte(body), "secret-key", time.Now())
		var ib *InsufficientBalanceError
		require.ErrorAs(t, err, &ib)
		assert.Equal(t, 1.5, ib.Required)
		assert.Equal(t, 0.25, ib.Balance)
		assert.Equal(t, "insufficient_balance", ib.Code)
		assert.ErrorIs(t, err, ErrInsufficientBalance)
		var apiErr *APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 402, apiErr.StatusCode)
		assert.Contains(t, err.Error(), "this call costs 1.5 USD; the balance is 0.25 USD")
		assert.Equal(t, 1, strings.Count(err.Error(), "1.5"), "each amount said once: %s", err)
	})
	t.Run("proxy page", func(t *testing.T) {
		err := newAPIError(answer(502, "", nil), []byte("<html>Bad gateway</html>"), "secret-key", time.Now())
		assert.Equal(t, "mediagen: GET /v3/generations/gen_1: 502 Bad Gateway: <html>Bad gateway</html>", err.Error())
	})
	t.Run("Retry-After", func(t *testing.T) {
		err := newAPIError(answer(429, "", http.Header{"Retry-After": {"12"}}), nil, "secret-key", time.Now())
		var apiErr *APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 12*time.Second, apiErr.RetryAfter)
		assert.ErrorIs(t, err, ErrRateLimited)
		assert.Contains(t, err.Error(), "retry after 12s")
	})
	t.Run("body capped", func(t *testing.T) {
		big := strings.Repeat("x", 10*maxErrorBody)
		err := newAPIError(answer(500, "", nil), []byte(big), "secret-key", time.Now())
		var apiErr *APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Len(t, apiErr.Body, maxErrorBody)
		assert.Less(t, len(err.Error()), 400)
	})
	t.Run("key echoed by the server is masked", func(t *testing.T) {
		body := `{"error":{"code":"unauthorized","message":"key mg_live_abcdef123 is revoked"}}`
		err := newAPIError(answer(401, body, nil), []byte(body), "mg_live_abcdef123", time.Now())
		assert.NotContains(t, err.Error(), "mg_live_abcdef123")
		var apiErr *APIError
		require.ErrorAs(t, err, &apiErr)
		assert.NotContains(t, string(apiErr.Body), "mg_live_abcdef123")
		assert.Contains(t, apiErr.Message, "[redacted]")
	})
}

func TestAPIErrorIs(t *testing.T) {
	sentinels := []error{ErrInvalidArgument, ErrUnauthorized, ErrInsufficientBalance, ErrPermissionRequired, ErrNotFound, ErrRateLimited}
	for _, tc := range []struct {
		status int
		code   string
		want   error
	}{
		{400, "invalid_argument", ErrInvalidArgument},
		{401, "unauthorized", ErrUnauthorized},
		{402, "insufficient_balance", ErrInsufficientBalance},
		{403, "permission_required", ErrPermissionRequired},
		{403, "forbidden", nil},
		{404, "not_found", ErrNotFound},
		{429, "rate_limited", ErrRateLimited},
		{500, "", nil},
	} {
		err := error(&APIError{StatusCode: tc.status, Code: tc.code})
		for _, s := range sentinels {
			assert.Equal(t, s == tc.want, errors.Is(err, s), "%d %s is %v", tc.status, tc.code, s)
		}
	}
}

// A service that echoes the key escaped (as JSON may: "\/", "\u0061") or
// URL-encoded gets it printed nowhere: not in the error, its message or its
// body.
func TestAPIErrorKeyInAnyEncoding(t *testing.T) {
	const key = "mg_live/abc+def=123"
	for _, body := range []string{
		`{"error":{"code":"unauthorized","message":"bad key mg_live\/abc+def=123"}}`,
		`{"error":{"code":"unauthorized","message":"bad key \u006dg_live\u002fabc+def=123"}}`,
		`{"error":{"code":"unauthorized","message":"next=mg_live%2Fabc%2Bdef%3D123"}}`,
	} {
		err := newAPIError(answer(401, body, nil), []byte(body), key, time.Now())
		var apiErr *APIError
		require.ErrorAs(t, err, &apiErr)
		for _, s := range []string{err.Error(), apiErr.Message, string(apiErr.Body)} {
			assert.NotContains(t, s, key)
			assert.NotContains(t, s, `mg_live\/abc`)
		}
		assert.False(t, redact.Carries(apiErr.Body, key), "%s", apiErr.Body)
	}
}
