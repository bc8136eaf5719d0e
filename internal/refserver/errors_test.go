package refserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/api"
)

func TestErrorBodies(t *testing.T) {
	rec := httptest.NewRecorder()
	e := newError(http.StatusTooManyRequests, api.ErrorCodeRateLimited, "slow down")
	e.retryAfter = 7
	require.NoError(t, e.VisitCreateVoiceResponse(rec))
	assert.Equal(t, 429, rec.Code)
	assert.Equal(t, "7", rec.Header().Get("Retry-After"))
	assert.JSONEq(t, `{"error":{"code":"rate_limited","message":"slow down"}}`, rec.Body.String())

	rec = httptest.NewRecorder()
	require.NoError(t, insufficientBalance(12500, 3).VisitCreateGenerationResponse(rec))
	assert.Equal(t, 402, rec.Code)
	var body api.InsufficientBalanceError
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	assert.Equal(t, 1.25, body.Error.Required)
	assert.Equal(t, 0.0003, body.Error.Balance)
	assert.Equal(t, api.InsufficientBalanceDetailCodeInsufficientBalance, body.Error.Code)
	assert.Equal(t, "this call costs 1.25 USD; the balance is 0.0003 USD", body.Error.Message)

	rec = httptest.NewRecorder()
	writeError(rec, errors.New("secret internals"))
	assert.Equal(t, 500, rec.Code)
	assert.NotContains(t, rec.Body.String(), "secret internals")
	assert.JSONEq(t, `{"error":{"code":"internal_error","message":"internal error"}}`, rec.Body.String())
}

// TestInsufficientBalanceMessage checks that the 402 message says once what
// the call costs and once what the balance is, in cents at least.
func TestInsufficientBalanceMessage(t *testing.T) {
	for _, tc := range []struct {
		required, balance int64
		want              string
	}{
		{7500, 2000, "this call costs 0.75 USD; the balance is 0.20 USD"},
		{10000, 0, "this call costs 1.00 USD; the balance is 0.00 USD"},
		{375, 374, "this call costs 0.0375 USD; the balance is 0.0374 USD"},
		{1725000, 123456, "this call costs 172.50 USD; the balance is 12.3456 USD"},
	} {
		e := insufficientBalance(tc.required, tc.balance)
		assert.Equal(t, tc.want, e.message)
		body, ok := e.body.(api.InsufficientBalanceError)
		require.True(t, ok)
		assert.Equal(t, tc.want, body.Error.Message, "the body carries the same message")
		assert.Equal(t, 2, strings.Count(e.message, " USD"), "two amounts, each said once")
	}
}
