package fault

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestZeroConfigPassesThroughUntouched(t *testing.T) {
	in := mustNew(t, Config{})
	ts, b := serve(t, in)
	c := plainClient(t)
	ctx := t.Context()

	cases := []struct{ method, path, body string }{
		{http.MethodGet, "/v3/generations", ""},
		{http.MethodPost, "/v3/generations", `{"feature":"image/generation"}`},
		{http.MethodDelete, "/v3/voices/v1", ""},
		{http.MethodPut, "/storage/upload/abc", "bytes"},
	}
	for i, tc := range cases {
		a, err := do(ctx, c, tc.method, ts.URL+tc.path, tc.body)
		require.NoError(t, err)
		assert.Equal(t, http.StatusCreated, a.status)
		assert.Equal(t, "yes", a.header.Get("X-Backend"))
		assert.Empty(t, a.header.Get(HeaderInjected))
		assert.Equal(t, tc.method+" "+tc.path+" "+tc.body, a.body)
		assert.Equal(t, int64(i+1), b.calls.Load())
	}
	assert.Equal(t, Stats{Requests: int64(len(cases))}, in.Stats())
}

func TestNilInjectorInjectsNothing(t *testing.T) {
	var in *Injector
	ts, b := serve(t, in)
	a, err := do(t.Context(), plainClient(t), http.MethodGet, ts.URL+"/v3/pricing", "")
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, a.status)
	assert.Equal(t, int64(1), b.calls.Load())
	assert.Equal(t, OutcomeDone, in.Outcome("video/avatar"))
	assert.Equal(t, Stats{}, in.Stats())
	assert.Equal(t, Config{}, in.Config())
}

func TestDropBeforeDoesNotProcess(t *testing.T) {
	in := mustNew(t, Config{DropBefore: 1})
	ts, b := serve(t, in)
	c := plainClient(t)

	// A large unread body must not keep the drop from happening.
	big := strings.Repeat("x", 1<<20)
	_, err := do(t.Context(), c, http.MethodPost, ts.URL+"/v3/generations", big)
	require.Error(t, err)
	_, err = do(t.Context(), c, http.MethodGet, ts.URL+"/v3/generations/g1", "")
	require.Error(t, err)

	assert.Zero(t, b.calls.Load())
	st := in.Stats()
	assert.Equal(t, int64(2), st.DroppedBefore)
	assert.Equal(t, int64(2), st.Requests)
}

func TestDropAfterProcessesButSendsNothing(t *testing.T) {
	in := mustNew(t, Config{DropAfter: 1})
	ts, b := serve(t, in)
	c := plainClient(t)

	_, err := do(t.Context(), c, http.MethodPost, ts.URL+"/v3/generations", `{"feature":"image/generation"}`)
	require.Error(t, err)
	assert.Equal(t, int64(1), b.calls.Load())
	assert.Equal(t, int64(1), in.Stats().DroppedAfter)

	// Not a byte of the answer may reach the client, not even a status line.
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "GET /v3/pricing HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	got, _ := io.ReadAll(conn)
	assert.Empty(t, got)
	assert.Equal(t, int64(2), b.calls.Load())
}

func TestDropAfterIgnoresUnreadBodyAndBuffersStreams(t *testing.T) {
	in := mustNew(t, Config{DropAfter: 1})
	var calls, flushed int
	var mu sync.Mutex
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Streams a little, flushes, never reads the body.
		_, _ = io.WriteString(w, "part 1")
		err := http.NewResponseController(w).Flush()
		mu.Lock()
		calls++
		if err == nil {
			flushed++
		}
		mu.Unlock()
		_, _ = io.WriteString(w, "part 2")
	})
	ts := httptest.NewServer(in.Wrap(h))
	defer ts.Close()

	_, err := do(t.Context(), plainClient(t), http.MethodPost, ts.URL+"/v3/voices", strings.Repeat("a", 1<<20))
	require.Error(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, calls)
	assert.Equal(t, 1, flushed, "Flush must succeed as a no-op")
}

func TestInjectedStatusShapeAndRetryAfter(t *testing.T) {
	cases := []struct {
		status     int
		code       string
		retryAfter time.Duration
		header     string
	}{
		{500, "internal_error", 0, ""},
		{502, "unavailable", 0, ""},
		{503, "unavailable", 0, ""},
		{504, "unavailable", 0, ""},
		{429, "rate_limited", 0, "1"},
		{429, "rate_limited", 1500 * time.Millisecond, "2"},
		{429, "rate_limited", 3 * time.Second, "3"},
		{404, "not_found", 0, ""},
		{418, "invalid_argument", 0, ""},
		{507, "internal_error", 0, ""},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d_%v", tc.status, tc.retryAfter), func(t *testing.T) {
			in := mustNew(t, Config{HTTPStatus: 1, Statuses: []int{tc.status}, RetryAfter: tc.retryAfter})
			ts, b := serve(t, in)
			a, err := do(t.Context(), plainClient(t), http.MethodPost, ts.URL+"/v3/generations", `{"feature":"x"}`)
			require.NoError(t, err)
			assert.Equal(t, tc.status, a.status)
			assert.Equal(t, "application/json", a.header.Get("Content-Type"))
			assert.Equal(t, tc.header, a.header.Get("Retry-After"))
			assert.Equal(t, "status", a.header.Get(HeaderInjected))

			var body struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(a.body), &body))
			assert.Equal(t, tc.code, body.Error.Code)
			assert.NotEmpty(t, body.Error.Message)

			assert.Zero(t, b.calls.Load(), "a replaced request is not processed")
			assert.Equal(t, int64(1), in.Stats().Replaced)
		})
	}
}

func TestInjected402KeepsTheInsufficientBalanceShape(t *testing.T) {
	in := mustNew(t, Config{HTTPStatus: 1, Statuses: []int{402}})
	ts, _ := serve(t, in)
	a, err := do(t.Context(), plainClient(t), http.MethodPost, ts.URL+"/v3/generations", "{}")
	require.NoError(t, err)
	assert.Equal(t, http.StatusPaymentRequired, a.status)
	assert.JSONEq(t, `{"error":{"code":"insufficient_balance","message":"injected fault: payment required","required":0,"balance":0}}`, a.body)
}

func TestDefaultStatusesAreUsed(t *testing.T) {
	in := mustNew(t, Config{Seed: 3, HTTPStatus: 1})
	ts, _ := serve(t, in)
	c := plainClient(t)
	seen := map[int]int{}
	for range 60 {
		a, err := do(t.Context(), c, http.MethodGet, ts.URL+"/v3/pricing", "")
		require.NoError(t, err)
		seen[a.status]++
	}
	assert.Len(t, seen, len(DefaultStatuses))
	for _, s := range DefaultStatuses {
		assert.Positive(t, seen[s], "status %d never injected", s)
	}
}

func TestLatencyDelaysMatchingAnswers(t *testing.T) {
	const lat = 150 * time.Millisecond
	in := mustNew(t, Config{Latency: lat})
	ts, b := serve(t, in)

	start := time.Now()
	a, err := do(t.Context(), plainClient(t), http.MethodGet, ts.URL+"/v3/pricing", "")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), lat)
	assert.Equal(t, http.StatusCreated, a.status)
	assert.Equal(t, int64(1), b.calls.Load())
	assert.Equal(t, int64(1), in.Stats().Delayed)
}

func TestLatencySparesOtherPaths(t *testing.T) {
	// An hour of latency would outlast the deadline if it applied.
	in := mustNew(t, Config{Latency: time.Hour})
	ts, b := serve(t, in)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	a, err := do(ctx, plainClient(t), http.MethodPut, ts.URL+"/storage/x", "bytes")
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, a.status)
	assert.Equal(t, int64(1), b.calls.Load())
	assert.Zero(t, in.Stats().Delayed)
}

func TestLatencyEndsWhenTheClientGoesAway(t *testing.T) {
	in := mustNew(t, Config{Latency: time.Minute})
	b := &backend{}
	returned := make(chan struct{})
	inner := in.Wrap(b)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		close(returned)
	}))
	defer ts.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := do(ctx, plainClient(t), http.MethodPost, ts.URL+"/v3/generations", "{}")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)

	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		require.Fail(t, "the server kept waiting after the client left")
	}
	assert.Zero(t, b.calls.Load(), "a request whose client left is not processed")
}

// trace sends n requests one after the other and names what each met.
func trace(t *testing.T, cfg Config, n int) []string {
	t.Helper()
	in := mustNew(t, cfg)
	ts, b := serve(t, in)
	c := plainClient(t)
	out := make([]string, 0, n)
	for i := range n {
		before := b.calls.Load()
		a, err := do(t.Context(), c, http.MethodPost, ts.URL+"/v3/generations", fmt.Sprint(i))
		processed := b.calls.Load() - before
		switch {
		case err != nil && processed == 0:
			out = append(out, "drop-before")
		case err != nil:
			out = append(out, "drop-after")
		default:
			out = append(out, fmt.Sprintf("%d/%d", a.status, processed))
		}
	}
	return out
}

func TestSameSeedSameFaults(t *testing.T) {
	cfg := Config{Seed: 42, HTTPStatus: 0.3, DropBefore: 0.1, DropAfter: 0.1, Statuses: []int{500, 503, 429}}
	first := trace(t, cfg, 200)
	second := trace(t, cfg, 200)
	assert.Equal(t, first, second)

	kinds := map[string]bool{}
	for _, k := range first {
		kinds[k] = true
	}
	for _, k := range []string{"drop-before", "drop-after", "500/0", "503/0", "429/0", "201/1"} {
		assert.True(t, kinds[k], "%s never happened in 200 requests", k)
	}

	cfg.Seed = 43
	assert.NotEqual(t, first, trace(t, cfg, 200))
}

func TestPathAndMethodFilters(t *testing.T) {
	cases := []struct {
		name    string
		cfg     Config
		method  string
		path    string
		faulted bool
	}{
		{"default covers /v3/", Config{}, "GET", "/v3/pricing", true},
		{"default spares storage", Config{}, "PUT", "/storage/u/1", false},
		{"default spares root", Config{}, "GET", "/healthz", false},
		{"listed storage", Config{Paths: []string{"/storage/"}}, "PUT", "/storage/u/1", true},
		{"prefix match", Config{Paths: []string{"/v3/generations"}}, "GET", "/v3/generations/g1", true},
		{"other path", Config{Paths: []string{"/v3/generations"}}, "POST", "/v3/voices", false},
		{"method match", Config{Methods: []string{"POST"}}, "POST", "/v3/voices", true},
		{"method any case", Config{Methods: []string{"post"}}, "POST", "/v3/voices", true},
		{"other method", Config{Methods: []string{"POST"}}, "GET", "/v3/voices", false},
		{"both", Config{Paths: []string{"/v3/voices"}, Methods: []string{"DELETE"}}, "DELETE", "/v3/voices/v1", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.HTTPStatus = 1
			tc.cfg.Statuses = []int{503}
			in := mustNew(t, tc.cfg)
			ts, b := serve(t, in)
			a, err := do(t.Context(), plainClient(t), tc.method, ts.URL+tc.path, "")
			require.NoError(t, err)
			if tc.faulted {
				assert.Equal(t, http.StatusServiceUnavailable, a.status)
				assert.Zero(t, b.calls.Load())
			} else {
				assert.Equal(t, http.StatusCreated, a.status)
				assert.Equal(t, int64(1), b.calls.Load())
			}
		})
	}
}

func TestSetConfigAtRunTime(t *testing.T) {
	in := mustNew(t, Config{})
	ts, b := serve(t, in)
	c := plainClient(t)
	get := func() int {
		a, err := do(t.Context(), c, http.MethodGet, ts.URL+"/v3/generations", "")
		require.NoError(t, err)
		return a.status
	}

	assert.Equal(t, http.StatusCreated, get())
	require.NoError(t, in.SetConfig(Config{HTTPStatus: 1, Statuses: []int{502}}))
	assert.Equal(t, http.StatusBadGateway, get())

	// A rejected config leaves the one in effect alone.
	require.Error(t, in.SetConfig(Config{HTTPStatus: 2}))
	assert.Equal(t, http.StatusBadGateway, get())

	require.NoError(t, in.SetConfig(Config{}))
	assert.Equal(t, http.StatusCreated, get())
	assert.Equal(t, int64(2), b.calls.Load())
	assert.Equal(t, int64(2), in.Stats().Replaced)
}

func TestConfigIsCopied(t *testing.T) {
	statuses := []int{502}
	in := mustNew(t, Config{HTTPStatus: 1, Statuses: statuses})
	statuses[0] = 500
	got := in.Config()
	assert.Equal(t, []int{502}, got.Statuses)
	got.Statuses[0] = 504
	assert.Equal(t, []int{502}, in.Config().Statuses)
}

// HTTP/2 connections cannot be hijacked; the drop falls back to aborting the
// stream.
func TestDropOverHTTP2(t *testing.T) {
	for _, cfg := range []Config{{DropBefore: 1}, {DropAfter: 1}} {
		in := mustNew(t, cfg)
		b := &backend{}
		ts := httptest.NewUnstartedServer(in.Wrap(b))
		ts.EnableHTTP2 = true
		ts.StartTLS()
		c := ts.Client()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+"/v3/pricing", nil)
		require.NoError(t, err)
		resp, err := c.Do(req)
		if err == nil {
			// The stream may be reset after the headers of the request were
			// accepted; reading the body must then fail.
			_, err = io.ReadAll(bufio.NewReader(resp.Body))
			resp.Body.Close()
		}
		require.Error(t, err)
		if cfg.DropAfter > 0 {
			assert.Equal(t, int64(1), b.calls.Load())
		} else {
			assert.Zero(t, b.calls.Load())
		}
		ts.Close()
	}
}

func TestConcurrentRequests(t *testing.T) {
	faulty := Config{Seed: 7, HTTPStatus: 0.25, DropBefore: 0.15, DropAfter: 0.15, Statuses: []int{429, 503}, RenderError: 0.2}
	in := mustNew(t, faulty)
	ts, b := serve(t, in)
	c := plainClient(t)

	const workers, each = 32, 20
	var mu sync.Mutex
	var errs, replaced, passed int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				a, err := do(t.Context(), c, http.MethodPost, ts.URL+"/v3/generations", "{}")
				mu.Lock()
				switch {
				case err != nil:
					errs++
				case a.status == http.StatusCreated:
					passed++
				default:
					replaced++
				}
				mu.Unlock()
				_ = in.Outcome("video/avatar")
				_ = in.Stats()
				if w == 0 && i%5 == 0 {
					// Toggling exercises SetConfig against requests in flight.
					cfg := faulty
					cfg.HTTPStatus = float64(i%2) * 0.25
					assert.NoError(t, in.SetConfig(cfg))
				}
			}
		})
	}
	wg.Wait()

	st := in.Stats()
	assert.Equal(t, int64(workers*each), st.Requests)
	assert.Equal(t, replaced, st.Replaced)
	assert.Equal(t, errs, st.DroppedBefore+st.DroppedAfter)
	assert.Equal(t, passed+st.DroppedAfter, b.calls.Load())
	assert.Positive(t, st.Replaced)
	assert.Positive(t, st.DroppedBefore)
	assert.Positive(t, st.DroppedAfter)
	assert.Positive(t, st.RenderErrors)
}

func TestLatencyKeepsRequestBodiesIntact(t *testing.T) {
	in := mustNew(t, Config{Latency: time.Millisecond})
	ts, b := serve(t, in)
	c := plainClient(t)
	for _, body := range []string{`{"feature":"image/generation"}`, strings.Repeat("z", prereadLimit+4096)} {
		a, err := do(t.Context(), c, http.MethodPost, ts.URL+"/v3/generations", body)
		require.NoError(t, err)
		assert.Equal(t, http.StatusCreated, a.status)
		assert.Equal(t, "POST /v3/generations "+body, a.body)
	}
	assert.Equal(t, int64(2), b.calls.Load())
	assert.Equal(t, int64(2), in.Stats().Delayed)
}
