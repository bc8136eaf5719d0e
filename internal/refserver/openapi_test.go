package refserver

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/openapi"
)

func TestOpenAPIServedVerbatim(t *testing.T) {
	h := newHarness(t)
	resp, err := h.client(keyA).GetOpenAPIWithResponse(context.Background())
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode())
	assert.Equal(t, "application/json", resp.HTTPResponse.Header.Get("Content-Type"))
	assert.Equal(t, openapi.Spec(), resp.Body)
	require.NotNil(t, resp.JSON200)
	assert.Equal(t, "1.0.0", (*resp.JSON200)["info"].(map[string]any)["version"])

	status, _, _ := h.raw(http.MethodGet, "/v3/openapi.json", "", "", nil)
	assert.Equal(t, http.StatusUnauthorized, status)
}
