package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/refserver"
)

func TestCheckLoopbackAcceptsOnlyLocalHosts(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:8080", "http://127.0.0.2/", "http://[::1]:9000", "http://localhost:1", "https://localhost"} {
		assert.NoError(t, checkLoopback(u), u)
	}
	for _, u := range []string{"http://10.0.0.1:8080", "http://example.com", "http://192.168.1.1", "ftp://127.0.0.1", "127.0.0.1:8080", "", "http://localhost.example.com"} {
		assert.Error(t, checkLoopback(u), u)
	}
}

func TestRunRefusesWhatIsOutOfBounds(t *testing.T) {
	for _, args := range [][]string{
		{"-url", "http://127.0.0.1:1", "-api-key", "k", "-n", "0"},
		{"-url", "http://127.0.0.1:1", "-api-key", "k", "-n", "1000001"},
		{"-url", "http://127.0.0.1:1", "-api-key", "k", "-workers", "513"},
		{"-url", "http://127.0.0.1:1", "-api-key", "k", "-max-time", "2h"},
		{"-url", "http://127.0.0.1:1", "-api-key", "k", "-rounds", "11"},
		{"-url", "http://127.0.0.1:1", "-api-key", "k", "-checkpoints", "10,x"},
		{"-url", "http://203.0.113.1:8080", "-api-key", "k"},
		{"-url", "http://127.0.0.1:1", "-api-key", "k", "-debug-url", "http://203.0.113.1:6060"},
		{"-url", "http://127.0.0.1:1", "-api-key", ""},
		{"-serve-floor", "0.0.0.0:0"},
	} {
		err := run(context.Background(), args, io.Discard, io.Discard)
		assert.Error(t, err, "%q", args)
	}
}

func TestDialerRefusesAddressesThatAreNotLoopback(t *testing.T) {
	// The URL check sees names; the dialer sees what they resolved to.
	_, err := newClient(1).Get("http://203.0.113.1:9/")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a loopback address")
}

func TestBoundariesStopAtWindowsAndCheckpoints(t *testing.T) {
	assert.Equal(t, []int{1000, 10000, 20000, 25000}, boundaries(25000, 10000, []int{1000, 10000, 100000}))
	assert.Equal(t, []int{5}, boundaries(5, 10, nil))
}

func TestGenerationIDIsTheFirstID(t *testing.T) {
	id, ok := generationID([]byte(`{"generation":{"balanceUsed":0.04,"id":"gen_1","params":{"prompt":"p"}}}`))
	assert.True(t, ok)
	assert.Equal(t, "gen_1", id)
	_, ok = generationID([]byte(`{"error":{"code":"invalid_argument"}}`))
	assert.False(t, ok)
}

func TestReadVarsWaitsForEveryVariable(t *testing.T) {
	vars, err := readVars(context.Background(), strings.NewReader("MEDIAGEN_BASE_URL=http://127.0.0.1:1\nMEDIAGEN_API_KEY=k\nMEDIAGEN_WEBHOOK_SECRET=s\nMEDIAGEN_DEBUG_URL=http://127.0.0.1:2\n"))
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:2", vars["MEDIAGEN_DEBUG_URL"])

	// A server that prints its lines and then serves leaves the pipe open:
	// the reader must not wait for more.
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		_, _ = io.WriteString(pw, "MEDIAGEN_BASE_URL=http://127.0.0.1:1\nMEDIAGEN_API_KEY=k\nMEDIAGEN_DEBUG_URL=http://127.0.0.1:2\n")
	}()
	vars, err = readVars(context.Background(), pr)
	require.NoError(t, err)
	assert.Equal(t, "k", vars["MEDIAGEN_API_KEY"])

	_, err = readVars(context.Background(), strings.NewReader("MEDIAGEN_BASE_URL=http://127.0.0.1:1\n"))
	assert.ErrorContains(t, err, "exited before printing")
}

// loadOutput runs a small load against ts with a debug listener reading
// this process's heap, and returns what it printed.
func loadOutput(t *testing.T, ts *httptest.Server, key string) string {
	t.Helper()
	debug := httptest.NewServer(http.HandlerFunc(heapHandler))
	t.Cleanup(debug.Close)
	var out bytes.Buffer
	err := run(context.Background(), []string{
		"-url", ts.URL, "-api-key", key, "-debug-url", debug.URL,
		"-n", "300", "-workers", "4", "-window", "100", "-checkpoints", "100,300", "-probes", "20", "-max-time", "2m",
	}, &out, io.Discard)
	require.NoError(t, err, out.String())
	return out.String()
}

func TestLoadDrivesTheReferenceServer(t *testing.T) {
	srv := refserver.New(refserver.WithProject("load-key", 1000), refserver.WithRenderScale(0.01), refserver.WithoutWebhookDelivery())
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	out := loadOutput(t, ts, "load-key")

	assert.Len(t, regexp.MustCompile(`(?m)^window +\d+-\d+ +\d+ pairs/s$`).FindAllString(out, -1), 3, out)
	assert.Regexp(t, `(?m)^at +100 stored: GET p50 .*; 100-row page p50 .*; heap -?\d+ B/generation$`, out)
	assert.Regexp(t, `(?m)^at +300 stored: `, out)
	assert.Regexp(t, `(?m)^total: 300 pairs in .* pairs/s; last window \d+\.\d\dx the first$`, out)
	for _, goal := range []string{"goal pairs/s", "goal last/first window", "goal GET and page growth", "goal heap"} {
		assert.Contains(t, out, goal)
	}
	assert.InDelta(t, 1000-300*0.04, srv.Balance("load-key"), 1e-6, "every pair created one image generation")
}

func TestLoadDrivesTheFloor(t *testing.T) {
	ts := httptest.NewServer(newFloor().handler())
	t.Cleanup(ts.Close)
	out := loadOutput(t, ts, floorKey)
	assert.Regexp(t, `(?m)^total: 300 pairs in `, out)
	assert.Regexp(t, `(?m)^at +300 stored: `, out)
}

func TestFloorPagesNewestFirstWithCursors(t *testing.T) {
	ts := httptest.NewServer(newFloor().handler())
	t.Cleanup(ts.Close)
	l := &loader{c: config{key: floorKey}, base: ts.URL, client: newClient(1)}
	var buf bytes.Buffer
	var ids []string
	for i := range 5 {
		id, err := l.pair(context.Background(), i, &buf)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	code, body, err := l.do(context.Background(), http.MethodGet, "/v3/generations?limit=3", nil, &buf)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	page := string(body)
	assert.Less(t, strings.Index(page, ids[4]), strings.Index(page, ids[2]), "newest first")
	assert.NotContains(t, page, ids[1])
	next, err := l.page(context.Background(), "2", &buf)
	require.NoError(t, err)
	assert.Empty(t, next, "the last page has no cursor")
}

func TestCompareSummaryPrintsMediansSpreadAndRatios(t *testing.T) {
	mk := func(label string, rate float64, get time.Duration) *result {
		took := time.Duration(float64(time.Second) * 100 / rate)
		return &result{
			label:   label,
			windows: []window{{0, 50, took / 2}, {50, 100, took / 2}},
			points: []point{
				{stored: 10, get: latency{p50: 100 * time.Microsecond}, page: latency{p50: time.Millisecond}, heapPerGen: 900},
				{stored: 100, get: latency{p50: get}, page: latency{p50: time.Millisecond}, heapPerGen: 1000},
			},
		}
	}
	var out bytes.Buffer
	compareSummary(&out, []*result{
		mk("refserver", 4000, 120*time.Microsecond), mk("floor", 8000, 100*time.Microsecond),
		mk("refserver", 5000, 140*time.Microsecond), mk("floor", 8000, 100*time.Microsecond),
	})
	s := out.String()
	assert.Regexp(t, `pairs/s +4500 \(4000-5000\) +8000 \(8000-8000\) +0\.56`, s)
	assert.Regexp(t, `GET p50 last/first point +1\.30 \(1\.20-1\.40\) +1\.00 \(1\.00-1\.00\) +1\.30`, s)
	assert.Regexp(t, `heap B/generation +1000 \(1000-1000\) +1000 \(1000-1000\) +1\.00`, s)
}
