package refserver

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAgentMethodsNotAllowed(t *testing.T) {
	h := newHarness(t)
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		status, hdr, body := h.raw(m, "/v3/mcp", keyA, "", nil)
		assert.Equal(t, http.StatusMethodNotAllowed, status, m)
		assert.Equal(t, "method_not_allowed", errorCode(t, hdr, body))
		assert.Equal(t, http.MethodPost, hdr.Get("Allow"), m)
	}
	status, hdr, body := h.raw(http.MethodPut, "/v3/mcp", keyA, "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	assert.Equal(t, "method_not_allowed", errorCode(t, hdr, body))
}

// agentCall posts one JSON-RPC message to the agent endpoint as project A.
func (h *harness) agentCall(body string) (int, http.Header, string) {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.ts.URL+"/v3/mcp", strings.NewReader(body))
	require.NoError(h.t, err)
	req.Header.Set("Authorization", keyA)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	status, hdr, b := h.rawRequest(req)
	return status, hdr, string(b)
}

// rawRequest sends a prepared request and reads the whole answer.
func (h *harness) rawRequest(req *http.Request) (int, http.Header, []byte) {
	h.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(h.t, err)
	return resp.StatusCode, resp.Header, b
}

func TestAgentCallsGoThroughTheSameRules(t *testing.T) {
	h := newHarness(t)
	status, hdr, body := h.agentCall(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, "text/event-stream", hdr.Get("Content-Type"))
	assert.Contains(t, body, `"result"`)

	status, _, body = h.agentCall(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, "create_generation")

	status, _, body = h.agentCall(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_generation","arguments":{"feature":"image/generation","args":{"prompt":"from the agent"}}}}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, 99.96, h.srv.Balance(keyA), "billed like the HTTP route")

	status, _, body = h.agentCall(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	assert.Equal(t, http.StatusAccepted, status, body)

	status, _, body = h.agentCall(`{"jsonrpc":"1.0","id":4,"method":"tools/list"}`)
	assert.Equal(t, http.StatusBadRequest, status, body)
	status, _, _ = h.agentCall(`not json`)
	assert.Equal(t, http.StatusBadRequest, status)
}
