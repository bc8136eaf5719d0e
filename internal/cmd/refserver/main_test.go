package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/testlog"
	"github.com/mediagen/mediagen-go/webhook"
)

// start runs the command with args and returns the printed variables and a
// stop function that shuts it down and reports run's error.
func start(t *testing.T, args ...string) (map[string]string, func() error) {
	t.Helper()
	return startLogging(t, io.Discard, args...)
}

// startLogging is start with the command's stderr going to stderr.
func startLogging(t *testing.T, stderr io.Writer, args ...string) (map[string]string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := run(ctx, args, pw, stderr)
		pw.CloseWithError(io.EOF)
		errc <- err
	}()
	vars := map[string]string{}
	want := 3
	if slices.Contains(args, "-test-control") {
		want++ // MEDIAGEN_TEST_CONTROL_URL too
	}
	if slices.Contains(args, "-debug-addr") {
		want++ // MEDIAGEN_DEBUG_URL too
	}
	sc := bufio.NewScanner(pr)
	for len(vars) < want && sc.Scan() {
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
	for _, args := range [][]string{
		{"-render-scale", "0"}, {"-nope"}, {"-api-key", ""}, {"-addr", "256.0.0.1:99999"},
		{"-fault-http", "1.5"}, {"-fault-statuses", "500,abc"}, {"-fault-statuses", "302"},
		{"-fault-drop-before", "0.6", "-fault-drop-after", "0.6"}, {"-fault-latency", "-1s"},
		{"-fault-render-error", "0.7", "-fault-render-timeout", "0.7"},
	} {
		assert.Error(t, run(context.Background(), args, io.Discard, io.Discard), args)
	}
}

// TestCommandExitStatus runs the built command as a shell would: -h,
// -help and --help print the usage on stdout and exit 0; a command line
// that does not parse prints the error and the usage on stderr and exits 2;
// a flag value run refuses later exits 1 with one line on stderr. None of
// these starts a server, so it runs with -short too.
func TestCommandExitStatus(t *testing.T) {
	bin := buildCommand(t)
	for _, tc := range []struct {
		args                 []string
		code                 int
		stdoutHas, stderrHas string
	}{
		{[]string{"-h"}, 0, "Usage: refserver", ""},
		{[]string{"-help"}, 0, "Usage: refserver", ""},
		{[]string{"--help"}, 0, "Usage: refserver", ""},
		{[]string{"-balance", "5", "-h"}, 0, "Usage: refserver", ""},
		{[]string{"-nope"}, 2, "", "flag provided but not defined: -nope\nUsage: refserver"},
		{[]string{"-render-scale", "abc"}, 2, "", `invalid value "abc" for flag -render-scale`},
		{[]string{"-api-key", ""}, 2, "", "empty API key"},
		{[]string{"-render-scale", "0"}, 1, "", "refserver: -render-scale must be positive\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, tc.args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.code, code, "stderr: %s", &stderr)
			assert.NotContains(t, stderr.String()+stdout.String(), "help requested")
			switch tc.code {
			case 0:
				assert.Empty(t, stderr.String())
				assert.Contains(t, stdout.String(), tc.stdoutHas)
				for _, flag := range []string{"-addr", "-api-key", "-allow-http-webhooks", "-test-control", "-fault-seed", "-fault-latency"} {
					assert.Regexp(t, `(?m)^  `+flag+`( |$)`, stdout.String(), "the usage lists %s", flag)
				}
			case 2:
				assert.Empty(t, stdout.String())
				assert.Contains(t, stderr.String(), tc.stderrHas)
				assert.Contains(t, stderr.String(), "  -allow-http-webhooks", "the usage follows the error")
				assert.NotContains(t, stderr.String(), "refserver: ", "the error is said once, by package flag")
			default:
				assert.Empty(t, stdout.String())
				assert.Equal(t, tc.stderrHas, stderr.String())
			}
		})
	}
}

// post submits an image generation as key and returns the status and the
// generation's id.
func post(t *testing.T, base, key string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v3/generations", strings.NewReader(`{"feature":"image/generation","args":{"prompt":"p"}}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var env struct {
		Generation struct {
			ID string `json:"id"`
		} `json:"generation"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&env)
	return resp.StatusCode, env.Generation.ID
}

func TestRunInjectsHTTPFaults(t *testing.T) {
	vars, stop := start(t, "-addr", "127.0.0.1:0", "-api-key", "K", "-fault-seed", "3", "-fault-http", "1",
		"-fault-statuses", "429", "-fault-retry-after", "4s", "-fault-latency", "50ms")
	req, err := http.NewRequest(http.MethodGet, vars["MEDIAGEN_BASE_URL"]+"/v3/pricing", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "K")
	begin := time.Now()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.GreaterOrEqual(t, time.Since(begin), 50*time.Millisecond, "-fault-latency")
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "4", resp.Header.Get("Retry-After"))
	status, _ := post(t, vars["MEDIAGEN_BASE_URL"], "K")
	assert.Equal(t, http.StatusTooManyRequests, status)
	require.NoError(t, stop())
}

func TestRunDropsConnections(t *testing.T) {
	vars, stop := start(t, "-addr", "127.0.0.1:0", "-api-key", "K", "-fault-drop-before", "1")
	plain := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, err := http.NewRequest(http.MethodGet, vars["MEDIAGEN_BASE_URL"]+"/v3/pricing", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "K")
	_, err = plain.Do(req)
	assert.Error(t, err, "-fault-drop-before drops every API connection")
	require.NoError(t, stop())
}

func TestRunInjectsRenderFaults(t *testing.T) {
	vars, stop := start(t, "-addr", "127.0.0.1:0", "-api-key", "K", "-render-scale", "0.01", "-fault-render-timeout", "1")
	base := vars["MEDIAGEN_BASE_URL"]
	status, id := post(t, base, "K")
	require.Equal(t, http.StatusOK, status)
	assert.Eventually(t, func() bool {
		_, b := get(t, base+"/v3/generations/"+id, "K")
		return strings.Contains(string(b), `"status":"timeout"`)
	}, 5*time.Second, 20*time.Millisecond)
	require.NoError(t, stop())
}

func TestRunReportsDroppedWebhooks(t *testing.T) {
	var attempts atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		attempts.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer receiver.Close()
	var stderr testlog.Buffer
	vars, stop := startLogging(t, &stderr, "-addr", "127.0.0.1:0", "-api-key", "K", "-render-scale", "0.01", "-allow-http-webhooks")
	body := `{"feature":"image/generation","args":{"prompt":"p"},"webhookUrl":"` + receiver.URL + `/hook"}`
	req, err := http.NewRequest(http.MethodPost, vars["MEDIAGEN_BASE_URL"]+"/v3/generations", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "K")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// The retry comes after the documented 2 s.
	assert.Eventually(t, func() bool { return strings.Contains(stderr.String(), "dropped after 2 attempts") },
		15*time.Second, 50*time.Millisecond, stderr.String())
	assert.Equal(t, int32(2), attempts.Load())
	assert.Contains(t, stderr.String(), "generation.done")
	require.NoError(t, stop())
}

func TestRunServesTheDebugListenerApart(t *testing.T) {
	vars, stop := start(t, "-addr", "127.0.0.1:0", "-api-key", "K", "-debug-addr", "127.0.0.1:0", "-test-control")
	dbg := vars["MEDIAGEN_DEBUG_URL"]
	require.True(t, strings.HasPrefix(dbg, "http://127.0.0.1:"), dbg)
	assert.NotEqual(t, vars["MEDIAGEN_BASE_URL"], dbg)
	assert.Contains(t, vars, "MEDIAGEN_TEST_CONTROL_URL")

	status, body := get(t, dbg+"/debug/heap", "")
	require.Equal(t, http.StatusOK, status)
	var heap struct {
		HeapAlloc uint64 `json:"heapAlloc"`
	}
	require.NoError(t, json.Unmarshal(body, &heap), string(body))
	assert.Positive(t, heap.HeapAlloc)
	status, _ = get(t, dbg+"/debug/pprof/", "")
	assert.Equal(t, http.StatusOK, status)
	status, _ = get(t, vars["MEDIAGEN_BASE_URL"]+"/debug/heap", "K")
	assert.Equal(t, http.StatusNotFound, status, "not on the API listener")

	require.NoError(t, stop())
}
