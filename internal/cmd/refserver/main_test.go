package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/webhook"
)

// start runs the command with args and returns the printed variables and a
// stop function that shuts it down and reports run's error.
func start(t *testing.T, args ...string) (map[string]string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := run(ctx, args, pw, io.Discard)
		pw.CloseWithError(io.EOF)
		errc <- err
	}()
	vars := map[string]string{}
	sc := bufio.NewScanner(pr)
	for len(vars) < 3 && sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		require.True(t, ok, sc.Text())
		vars[k] = v
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	stop := func() error {
		cancel()
		select {
		case err := <-errc:
			return err
		case <-time.After(10 * time.Second):
			return context.DeadlineExceeded
		}
	}
	return vars, stop
}

func get(t *testing.T, url, key string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

func TestRunPrintsTheProjectAndServes(t *testing.T) {
	vars, stop := start(t, "-addr", "127.0.0.1:0", "-api-key", "K1", "-api-key", "K2", "-balance", "42", "-render-scale", "0.01", "-allow-http-webhooks")
	require.Contains(t, vars, "MEDIAGEN_BASE_URL")
	assert.Equal(t, "K1", vars["MEDIAGEN_API_KEY"])
	assert.True(t, strings.HasPrefix(vars["MEDIAGEN_WEBHOOK_SECRET"], "whsec_"))
	base := vars["MEDIAGEN_BASE_URL"]
	assert.True(t, strings.HasPrefix(base, "http://127.0.0.1:"), base)

	status, body := get(t, base+"/v3/pricing", "K1")
	assert.Equal(t, http.StatusOK, status, string(body))
	status, _ = get(t, base+"/v3/pricing", "K2")
	assert.Equal(t, http.StatusOK, status, "every -api-key is a project")
	status, _ = get(t, base+"/v3/pricing", "nope")
	assert.Equal(t, http.StatusUnauthorized, status)

	req, err := http.NewRequest(http.MethodPost, base+"/v3/generations", strings.NewReader(`{"feature":"image/generation","args":{"prompt":"p"}}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "K1")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var env struct {
		Generation struct {
			ID          string  `json:"id"`
			BalanceUsed float64 `json:"balanceUsed"`
		} `json:"generation"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
	resp.Body.Close()
	assert.Equal(t, 0.04, env.Generation.BalanceUsed)
	assert.Eventually(t, func() bool {
		_, b := get(t, base+"/v3/generations/"+env.Generation.ID, "K1")
		return strings.Contains(string(b), `"status":"done"`)
	}, 5*time.Second, 20*time.Millisecond, "render scale 0.01 finishes in well under a second")

	require.NoError(t, stop())
}

func TestRunDeliversSignedWebhooks(t *testing.T) {
	type delivery struct {
		body   []byte
		header http.Header
	}
	got := make(chan delivery, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- delivery{b, r.Header.Clone()}
	}))
	defer receiver.Close()

	vars, stop := start(t, "-addr", "127.0.0.1:0", "-api-key", "K", "-render-scale", "0.01", "-allow-http-webhooks")
	body := `{"feature":"image/generation","args":{"prompt":"p"},"webhookUrl":"` + receiver.URL + `/hook"}`
	req, err := http.NewRequest(http.MethodPost, vars["MEDIAGEN_BASE_URL"]+"/v3/generations", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "K")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	select {
	case d := <-got:
		ev, err := webhook.Parse(d.body, d.header, vars["MEDIAGEN_WEBHOOK_SECRET"])
		require.NoError(t, err)
		assert.Equal(t, "generation.done", string(ev.Name))
		require.NotNil(t, ev.Generation)
		require.NotNil(t, ev.Generation.Output)
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook delivery")
	}
	require.NoError(t, stop())
}

func TestRunMakesUpAKey(t *testing.T) {
	vars, stop := start(t, "-addr", "127.0.0.1:0")
	key := vars["MEDIAGEN_API_KEY"]
	require.NotEmpty(t, key)
	status, _ := get(t, vars["MEDIAGEN_BASE_URL"]+"/v3/pricing", key)
	assert.Equal(t, http.StatusOK, status)
	require.NoError(t, stop())
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-render-scale", "0"}, {"-nope"}, {"-api-key", ""}, {"-addr", "256.0.0.1:99999"}} {
		assert.Error(t, run(context.Background(), args, io.Discard, io.Discard), args)
	}
}

func TestDialable(t *testing.T) {
	assert.Equal(t, "127.0.0.1:8080", dialable(&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}))
	assert.Equal(t, "127.0.0.1:9", dialable(&net.TCPAddr{IP: net.IPv4zero, Port: 9}))
	assert.Equal(t, "10.1.2.3:7", dialable(&net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 7}))
}
