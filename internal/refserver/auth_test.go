package refserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// routes lists every operation of the contract with a body it accepts.
var routes = []struct{ method, path, body string }{
	{http.MethodPost, "/v3/files/upload", ""},
	{http.MethodPost, "/v3/files/upload-url", `{"bytes":10,"contentType":"image/png"}`},
	{http.MethodGet, "/v3/generations", ""},
	{http.MethodPost, "/v3/generations", `{"feature":"image/generation","args":{"prompt":"p"}}`},
	{http.MethodGet, "/v3/generations/gen_x", ""},
	{http.MethodDelete, "/v3/generations/gen_x", ""},
	{http.MethodGet, "/v3/mcp", ""},
	{http.MethodDelete, "/v3/mcp", ""},
	{http.MethodPost, "/v3/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
	{http.MethodGet, "/v3/openapi.json", ""},
	{http.MethodGet, "/v3/pricing", ""},
	{http.MethodGet, "/v3/templates", ""},
	{http.MethodGet, "/v3/templates/pvw_x", ""},
	{http.MethodGet, "/v3/voices", ""},
	{http.MethodPost, "/v3/voices", `{"name":"n","audio":"file_x"}`},
	{http.MethodGet, "/v3/voices/v", ""},
	{http.MethodDelete, "/v3/voices/v", ""},
	{http.MethodPut, "/v3/voices/v/favorite", ""},
	{http.MethodDelete, "/v3/voices/v/favorite", ""},
}

func TestEveryRouteNeedsTheRawKey(t *testing.T) {
	h := newHarness(t)
	for _, rt := range routes {
		for name, key := range map[string]string{"missing": "", "bearer": "Bearer " + keyA, "unknown": "not-a-key", "lowercase": strings.ToUpper(keyA)} {
			status, hdr, body := h.raw(rt.method, rt.path, key, "application/json", strings.NewReader(rt.body))
			assert.Equal(t, http.StatusUnauthorized, status, "%s %s %s", name, rt.method, rt.path)
			assert.Equal(t, "unauthorized", errorCode(t, hdr, body))
			assert.NotContains(t, string(body), keyA, "the key is never echoed")
		}
	}
	assert.Equal(t, 100.0, h.srv.Balance(keyA))
}

func TestTwoAuthorizationHeadersAreRefused(t *testing.T) {
	h := newHarness(t)
	req, err := http.NewRequest(http.MethodGet, h.ts.URL+"/v3/pricing", nil)
	assert.NoError(t, err)
	req.Header.Add("Authorization", keyA)
	req.Header.Add("Authorization", keyB)
	resp, err := http.DefaultClient.Do(req)
	assert.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}
