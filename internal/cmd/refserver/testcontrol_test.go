package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// call sends a request as key with a JSON body (none when body is "") and
// returns the status and the decoded JSON answer, as curl would show it.
func call(t *testing.T, method, url, key, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	if len(b) > 0 {
		require.NoError(t, json.Unmarshal(b, &out), string(b))
	}
	return resp.StatusCode, out
}

func errCode(body map[string]any) any {
	e, _ := body["error"].(map[string]any)
	return e["code"]
}

func TestRunTestControlIsOffByDefault(t *testing.T) {
	vars, stop := start(t, "-addr", "127.0.0.1:0", "-api-key", "K")
	assert.NotContains(t, vars, "MEDIAGEN_TEST_CONTROL_URL")
	for _, path := range []string{"/test/v1/clock", "/test/v1/balance", "/test/v1/faults"} {
		status, body := call(t, http.MethodGet, vars["MEDIAGEN_BASE_URL"]+path, "K", "")
		assert.Equal(t, http.StatusNotFound, status, path)
		assert.Equal(t, "not_found", errCode(body), path)
	}
	status, _ := call(t, http.MethodPost, vars["MEDIAGEN_BASE_URL"]+"/test/v1/clock/advance", "K", `{"seconds":60}`)
	assert.Equal(t, http.StatusNotFound, status)
	require.NoError(t, stop())
}

func TestRunTestControl(t *testing.T) {
	vars, stop := start(t, "-addr", "127.0.0.1:0", "-api-key", "K", "-api-key", "K2", "-test-control",
		"-fault-http", "1", "-fault-statuses", "503")
	base := vars["MEDIAGEN_BASE_URL"]
	tc := vars["MEDIAGEN_TEST_CONTROL_URL"]
	assert.Equal(t, base+"/test/v1", tc)

	status, body := call(t, http.MethodGet, tc+"/clock", "", "")
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, "unauthorized", errCode(body))
	status, _ = call(t, http.MethodGet, tc+"/clock", "nope", "")
	assert.Equal(t, http.StatusUnauthorized, status)

	// The clock runs in real time until advanced.
	status, body = call(t, http.MethodGet, tc+"/clock", "K", "")
	require.Equal(t, http.StatusOK, status, body)
	now, err := time.Parse(time.RFC3339Nano, body["now"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), now, 5*time.Second)
	status, body = call(t, http.MethodPost, tc+"/clock/advance", "K", `{"seconds": 86400}`)
	require.Equal(t, http.StatusOK, status, body)
	now, err = time.Parse(time.RFC3339Nano, body["now"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(24*time.Hour), now, 5*time.Second)

	// The -fault flags seed the configuration; test control is never faulted
	// and heals the API.
	status, _ = call(t, http.MethodGet, base+"/v3/pricing", "K", "")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	status, body = call(t, http.MethodGet, tc+"/faults", "K", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.EqualValues(t, 1, body["config"].(map[string]any)["httpStatus"])
	status, body = call(t, http.MethodPut, tc+"/faults", "K", `{}`)
	require.Equal(t, http.StatusOK, status, body)
	status, _ = call(t, http.MethodGet, base+"/v3/pricing", "K", "")
	assert.Equal(t, http.StatusOK, status)

	// Balances are per project.
	status, body = call(t, http.MethodPut, tc+"/balance", "K2", `{"balance": 7}`)
	require.Equal(t, http.StatusOK, status, body)
	_, body = call(t, http.MethodGet, tc+"/balance", "K", "")
	assert.EqualValues(t, 100, body["balance"])
	_, body = call(t, http.MethodGet, tc+"/balance", "K2", "")
	assert.EqualValues(t, 7, body["balance"])
	require.NoError(t, stop())
}
