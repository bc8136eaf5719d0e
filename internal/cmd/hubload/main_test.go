package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
)

func TestParseConfigRefusesWhatIsOutOfBounds(t *testing.T) {
	for _, args := range [][]string{
		{"-mix", "image=0"},
		{"-mix", "image=600,audio=401"},
		{"-mix", "text=3"},
		{"-mix", "image=-1,audio=2"},
		{"-mix", "image"},
		{"-sides", "hub,hub"},
		{"-sides", "webhooks"},
		{"-sides", ""},
		{"-rounds", "0"},
		{"-rounds", "11"},
		{"-render-scale", "0"},
		{"-render-scale", "11"},
		{"-creating", "65"},
		{"-max-time", "2h"},
		{"-max-time", "0s"},
		{"extra"},
	} {
		_, err := parseConfig(args, io.Discard)
		assert.Error(t, err, "%q", args)
	}
	cfg, err := parseConfig(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, mix{image: 40, audio: 30, video: 30}, cfg.mix, "the mix of issue 22")
	assert.Equal(t, allSides, cfg.sides)
	assert.InDelta(t, 1.0, cfg.scale, 0, "real render times by default")
}

func TestCheckLoopbackAcceptsOnlyLocalHosts(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:8080", "http://[::1]:9000", "http://localhost:1"} {
		assert.NoError(t, checkLoopback(u), u)
	}
	for _, u := range []string{"http://10.0.0.1:8080", "http://example.com", "ftp://127.0.0.1", "127.0.0.1:8080", ""} {
		assert.Error(t, checkLoopback(u), u)
	}
	// The URL check sees names; the dialer sees what they resolved to.
	_, err := newHTTPClient(1).Get("http://203.0.113.1:9/")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a loopback address")
}

func TestPlanIsTheSameForEverySideAndStaysWithinTheFirstBackstop(t *testing.T) {
	m := mix{image: 40, audio: 30, video: 30}
	a, b := plan(m, 22), plan(m, 22)
	require.Equal(t, a, b, "the same seed gives the same generations")
	assert.NotEqual(t, a, plan(m, 23))
	count := map[mediagen.Kind]int{}
	for i, j := range a {
		assert.Equal(t, i, j.index)
		count[j.kind]++
		switch j.kind {
		case mediagen.KindAudio:
			// 12 s + 1 s per 100 characters: at most 19 s, under 20 s.
			assert.True(t, j.chars >= minChars && j.chars <= maxChars, j.chars)
			assert.Len(t, script(j.chars), j.chars)
		case mediagen.KindVideo:
			assert.True(t, j.seconds >= minClip && j.seconds <= maxClip, j.seconds)
		}
	}
	assert.Equal(t, map[mediagen.Kind]int{mediagen.KindImage: 40, mediagen.KindAudio: 30, mediagen.KindVideo: 30}, count)
}

func TestPercentileIsTheNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	assert.Equal(t, 50*time.Millisecond, percentile(d, 0.5))
	assert.Equal(t, 99*time.Millisecond, percentile(d, 0.99))
	assert.Equal(t, 100*time.Millisecond, percentile(d, 1))
	assert.Equal(t, time.Duration(0), percentile(nil, 0.5))
	assert.Equal(t, 100*time.Millisecond, d[0], "the input is left as it was")
}

func TestCounterSortsCreatesGetsAndTheRest(t *testing.T) {
	k := &counter{gets: map[string]int{}}
	send := func(method, path string) {
		req := httptest.NewRequest(method, "http://127.0.0.1:1"+path, nil)
		_, err := k.middleware(req, func(*http.Request) (*http.Response, error) { return nil, nil })
		require.NoError(t, err)
	}
	send(http.MethodPost, "/v3/generations")
	send(http.MethodGet, "/v3/generations/gen_1")
	send(http.MethodGet, "/v3/generations/gen_1")
	send(http.MethodGet, "/v3/generations?feature=image%2Fgeneration")
	send(http.MethodGet, "/v3/voices")
	assert.Equal(t, 5, k.total)
	assert.Equal(t, 1, k.creates)
	assert.Equal(t, map[string]int{"gen_1": 2}, k.gets)
}

func TestReadVarsWaitsForEveryVariable(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		_, _ = io.WriteString(pw, "MEDIAGEN_BASE_URL=http://127.0.0.1:1\nMEDIAGEN_API_KEY=k\nMEDIAGEN_WEBHOOK_SECRET=s\n")
	}()
	vars, err := readVars(context.Background(), pr)
	require.NoError(t, err, "the server leaves its stdout open: no read past the last variable")
	assert.Equal(t, "s", vars["MEDIAGEN_WEBHOOK_SECRET"])
	_, err = readVars(context.Background(), strings.NewReader("MEDIAGEN_BASE_URL=http://127.0.0.1:1\n"))
	assert.ErrorContains(t, err, "exited before printing")
}

// The harness at a tiny size against the command: every wait ends done and
// every request is counted. No time is asserted.
func TestHarnessRunsTheMixOnTheCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the reference server command; the dropped side waits out the 10 s first backstop of images")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	bin, err := buildRefserver(ctx, t.TempDir(), io.Discard)
	require.NoError(t, err)

	// Webhooks and polling: 6 generations of every kind at scale 0.01.
	cfg, err := parseConfig([]string{"-render-scale", "0.01", "-mix", "image=2,audio=2,video=2", "-sides", "hub,poll", "-refserver", bin}, io.Discard)
	require.NoError(t, err)
	var out bytes.Buffer
	results, err := measure(ctx, cfg, &out, io.Discard)
	require.NoError(t, err, out.String())
	require.Len(t, results, 2)
	for _, res := range results {
		require.Len(t, res.records, 6, res.side)
		assert.Equal(t, 6, res.creates, res.side)
		gets := 0
		for _, r := range res.records {
			assert.NoError(t, r.err)
			assert.Equal(t, mediagen.GenerationStatusDone, r.status, "%s #%d", res.side, r.index)
			assert.NotEmpty(t, r.id)
			assert.False(t, r.responseDate.IsZero(), "the returned generation says when its render ended")
			assert.False(t, r.returned.Before(r.waitStart))
			gets += r.gets
			switch res.side {
			case sideHub:
				assert.False(t, r.arrival.IsZero(), "the receiver got the event of #%d", r.index)
				assert.False(t, r.handed.Before(r.arrival))
			case sidePoll:
				assert.Positive(t, r.gets, "polling alone reads each generation at least once")
				assert.True(t, r.arrival.IsZero())
			}
		}
		assert.Equal(t, res.requests, res.creates+gets+res.other, res.side)
	}
	assert.Equal(t, sideHub, results[0].side)
	assert.Equal(t, 6, results[0].delivered, "one event per generation, each handed to the hub")

	report(&out, cfg, results)
	s := out.String()
	assert.Contains(t, s, "goal requests per generation with the hub <= 1.1: ")
	assert.Contains(t, s, "(polling alone ")
	assert.Contains(t, s, "goal event to return p99 < 50ms: ")

	// Every webhook dropped: images only, so that the test waits out the
	// first backstop of images (10 s) and not that of videos (60 s).
	cfg, err = parseConfig([]string{"-render-scale", "0.01", "-mix", "image=2", "-sides", "dropped", "-refserver", bin}, io.Discard)
	require.NoError(t, err)
	out.Reset()
	results, err = measure(ctx, cfg, &out, io.Discard)
	require.NoError(t, err, out.String())
	require.Len(t, results, 1)
	res := results[0]
	require.Len(t, res.records, 2)
	for _, r := range res.records {
		assert.NoError(t, r.err)
		assert.Equal(t, mediagen.GenerationStatusDone, r.status)
		assert.Positive(t, r.gets, "only a backstop check can end the wait")
		assert.True(t, r.arrival.IsZero())
	}
	assert.Zero(t, res.delivered)
	assert.GreaterOrEqual(t, res.refused, 2, "each event was sent, and refused")
	report(&out, cfg, results)
	assert.Contains(t, out.String(), "goal every webhook dropped, every wait done: 2 of 2")
}
