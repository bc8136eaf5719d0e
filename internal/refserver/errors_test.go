package refserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
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
	assert.NotEmpty(t, body.Error.Message)

	rec = httptest.NewRecorder()
	writeError(rec, errors.New("secret internals"))
	assert.Equal(t, 500, rec.Code)
	assert.NotContains(t, rec.Body.String(), "secret internals")
	assert.JSONEq(t, `{"error":{"code":"internal_error","message":"internal error"}}`, rec.Body.String())
}
