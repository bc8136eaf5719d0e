package refserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/feature"
	"github.com/mediagen/mediagen-go/internal/refserver/fault"
)

// plainClient opens a connection per request: Go's transport silently
// retries idempotent requests that failed on a reused connection, which
// would hide a dropped connection.
var plainClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}

const createBody = `{"feature":"image/generation","args":{"prompt":"p"}}`

// try sends a request as key without failing on a transport error.
func (h *harness) try(method, path, key, body string) (*http.Response, []byte, error) {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.ts.URL+path, rd)
	require.NoError(h.t, err)
	req.Header.Set("Authorization", key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := plainClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// listAll returns every generation key's project sees.
func (h *harness) listAll(key string) []mediagen.Generation {
	h.t.Helper()
	var out []mediagen.Generation
	params := &api.ListGenerationsParams{Limit: 100}
	for {
		resp, err := h.client(key).ListGenerationsWithResponse(context.Background(), params)
		require.NoError(h.t, err)
		require.Equal(h.t, http.StatusOK, resp.StatusCode(), string(resp.Body))
		out = append(out, resp.JSON200.Generations...)
		if resp.JSON200.NextCursor == nil {
			return out
		}
		params.Cursor = *resp.JSON200.NextCursor
	}
}

// assertBooks checks, with faults off, that key's project is consistent:
// the balance is the initial one minus the charges of listed generations
// that were not refunded, and each generation that ended emitted exactly
// one event (so it was refunded at most once). It returns the listing.
func (h *harness) assertBooks(key string, initial float64) []mediagen.Generation {
	h.t.Helper()
	h.srv.Settle()
	list := h.listAll(key)
	charged := 0.0
	ended := map[string]bool{}
	for _, g := range list {
		switch g.Status {
		case mediagen.GenerationStatusError, mediagen.GenerationStatusTimeout:
			ended[g.ID] = true
		case mediagen.GenerationStatusDone:
			ended[g.ID] = true
			charged += g.BalanceUsed
		default:
			charged += g.BalanceUsed
		}
	}
	assert.InDelta(h.t, initial-charged, h.srv.Balance(key), 1e-9, "balance = initial - charges of live, unrefunded generations")
	events := map[string]int{}
	for _, ev := range h.recorded() {
		if ev.Generation != nil && ev.ProjectAPIKey == key {
			events[ev.Generation.ID]++
		}
	}
	for id := range ended {
		assert.Equal(h.t, 1, events[id], "one terminal event for %s", id)
	}
	assert.Len(h.t, events, len(ended), "no event for a generation not listed")
	return list
}

// injectedCode decodes an injected error body.
func injectedCode(t *testing.T, resp *http.Response, body []byte) string {
	t.Helper()
	assert.Equal(t, "status", resp.Header.Get(fault.HeaderInjected))
	return errorCode(t, resp.Header, body)
}

// onCreate limits faults to POST /v3/generations.
func onCreate(c fault.Config) fault.Config {
	c.Paths, c.Methods = []string{"/v3/generations"}, []string{http.MethodPost}
	return c
}

func TestFaultsAreOffByDefault(t *testing.T) {
	h := newHarness(t)
	assert.Nil(t, h.srv.Faults())
	resp, _, err := h.try(http.MethodPost, "/v3/generations", keyA, createBody)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestInvalidFaultConfigPanics(t *testing.T) {
	assert.PanicsWithValue(t, "refserver: WithFaults: fault: DropBefore -1 is not a probability in [0, 1]", func() {
		New(WithFaults(fault.Config{DropBefore: -1}))
	})
}

func TestFaultDropBeforeCreatesNothing(t *testing.T) {
	h := newHarness(t, WithFaults(onCreate(fault.Config{DropBefore: 1})))
	for range 3 {
		resp, _, err := h.try(http.MethodPost, "/v3/generations", keyA, createBody)
		require.Error(t, err, "the connection is dropped")
		assert.Nil(t, resp)
	}
	assert.Equal(t, int64(3), h.srv.Faults().Stats().DroppedBefore)

	resp, _, err := h.try(http.MethodGet, "/v3/pricing", keyA, "")
	require.NoError(t, err, "other routes are untouched")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, h.srv.Faults().SetConfig(fault.Config{}))
	assert.Empty(t, h.assertBooks(keyA, 100), "nothing created")
	assert.Equal(t, 100.0, h.srv.Balance(keyA), "nothing charged")
}

func TestFaultDropAfterCreatesAndChargesOnce(t *testing.T) {
	h := newHarness(t, WithFaults(onCreate(fault.Config{DropAfter: 1})))
	resp, _, err := h.try(http.MethodPost, "/v3/generations", keyA, createBody)
	require.Error(t, err, "the answer is lost")
	assert.Nil(t, resp)
	assert.Equal(t, int64(1), h.srv.Faults().Stats().DroppedAfter)

	require.NoError(t, h.srv.Faults().SetConfig(fault.Config{}))
	list := h.assertBooks(keyA, 100)
	require.Len(t, list, 1, "the request was processed")
	assert.InDelta(t, 100-list[0].BalanceUsed, h.srv.Balance(keyA), 1e-9, "charged exactly once")

	h.advance(time.Minute)
	list = h.assertBooks(keyA, 100)
	require.Len(t, list, 1)
	assert.Equal(t, mediagen.GenerationStatusDone, list[0].Status)
	assert.InDelta(t, 99.96, h.srv.Balance(keyA), 1e-9)
}

func TestFaultStatusesReplaceAnswersWithoutProcessing(t *testing.T) {
	for status, code := range map[int]string{500: "internal_error", 502: "unavailable", 503: "unavailable"} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			h := newHarness(t, WithFaults(onCreate(fault.Config{HTTPStatus: 1, Statuses: []int{status}})))
			resp, body, err := h.try(http.MethodPost, "/v3/generations", keyA, createBody)
			require.NoError(t, err)
			assert.Equal(t, status, resp.StatusCode)
			assert.Equal(t, code, injectedCode(t, resp, body))
			assert.Empty(t, resp.Header.Get("Retry-After"))

			require.NoError(t, h.srv.Faults().SetConfig(fault.Config{}))
			assert.Empty(t, h.assertBooks(keyA, 100), "nothing processed")
			assert.Equal(t, 100.0, h.srv.Balance(keyA))
		})
	}
}

func TestFault429CarriesRetryAfter(t *testing.T) {
	h := newHarness(t, WithFaults(fault.Config{HTTPStatus: 1, Statuses: []int{429}, RetryAfter: 3 * time.Second}))
	for _, path := range []string{"/v3/pricing", "/v3/generations"} {
		resp, body, err := h.try(http.MethodGet, path, keyA, "")
		require.NoError(t, err)
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, path)
		assert.Equal(t, "3", resp.Header.Get("Retry-After"))
		assert.Equal(t, "rate_limited", injectedCode(t, resp, body))
	}
	resp, body, err := h.try(http.MethodPost, "/v3/generations", keyA, createBody)
	require.NoError(t, err)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, string(body))
	assert.Equal(t, int64(3), h.srv.Faults().Stats().Replaced)

	require.NoError(t, h.srv.Faults().SetConfig(fault.Config{}))
	assert.Empty(t, h.assertBooks(keyA, 100))
}

func TestFaultLatencyDelaysTheAnswer(t *testing.T) {
	const delay = 200 * time.Millisecond
	h := newHarness(t, WithFaults(onCreate(fault.Config{Latency: delay})))
	start := time.Now()
	resp, body, err := h.try(http.MethodPost, "/v3/generations", keyA, createBody)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), delay)
	assert.Equal(t, http.StatusOK, resp.StatusCode, string(body), "a slow answer is still processed")
	assert.Equal(t, int64(1), h.srv.Faults().Stats().Delayed)
	require.Len(t, h.assertBooks(keyA, 100), 1)
}

// renderOutcomes submits n image generations and a thumbnail after each,
// lets them end, and returns the image statuses in submission order.
func renderOutcomes(t *testing.T, h *harness, n int) []mediagen.GenerationStatus {
	t.Helper()
	var images, others []string
	for range n {
		images = append(images, h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "p"}).ID)
		others = append(others, h.mustCreate(keyA, "image/youtube-thumbnail", map[string]any{"prompt": "p"}).ID)
	}
	h.advance(time.Minute)
	for _, id := range others {
		assert.Equal(t, mediagen.GenerationStatusDone, h.get(keyA, id).JSON200.Generation.Status, "other features are not subject to the faults")
	}
	out := make([]mediagen.GenerationStatus, len(images))
	for i, id := range images {
		out[i] = h.get(keyA, id).JSON200.Generation.Status
	}
	return out
}

func TestFaultRenderOutcomesBySeedFeatureAndProbability(t *testing.T) {
	cfg := fault.Config{Seed: 42, RenderError: 0.4, RenderTimeout: 0.3, RenderFeatures: []string{"image/generation"}}
	h1 := newHarness(t, WithFaults(cfg))
	h2 := newHarness(t, WithFaults(cfg))
	const n = 40
	first := renderOutcomes(t, h1, n)
	second := renderOutcomes(t, h2, n)
	assert.Equal(t, first, second, "the same seed gives the same outcomes")

	count := map[mediagen.GenerationStatus]int{}
	for _, s := range first {
		count[s]++
	}
	for _, s := range []mediagen.GenerationStatus{mediagen.GenerationStatusDone, mediagen.GenerationStatusError, mediagen.GenerationStatusTimeout} {
		assert.Positive(t, count[s], "some renders end %s", s)
	}
	st := h1.srv.Faults().Stats()
	assert.Equal(t, int64(count[mediagen.GenerationStatusError]), st.RenderErrors)
	assert.Equal(t, int64(count[mediagen.GenerationStatusTimeout]), st.RenderTimeouts)

	list := h1.assertBooks(keyA, 100)
	assert.Len(t, list, 2*n)
	assert.InDelta(t, 100-float64(count[mediagen.GenerationStatusDone])*0.04-n*0.05, h1.srv.Balance(keyA), 1e-9,
		"failed renders are refunded")
}

func TestFaultRenderErrorOnVoiceClones(t *testing.T) {
	h := newHarness(t, WithFaults(fault.Config{RenderError: 1, RenderFeatures: []string{feature.VoiceClone}}))
	g := h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "p"})
	c := h.cloneVoice(keyA, "Narrator", h.sample(keyA, 12*time.Second))
	require.Equal(t, http.StatusOK, c.status, c.body)
	h.advance(time.Hour)

	assert.Equal(t, mediagen.GenerationStatusDone, h.get(keyA, g.ID).JSON200.Generation.Status)
	v, err := h.client(keyA).GetVoiceWithResponse(context.Background(), c.voice.ID)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, v.StatusCode())
	assert.Equal(t, mediagen.VoiceStatusError, v.JSON200.Voice.Status)
	assert.InDelta(t, 100-g.BalanceUsed, h.srv.Balance(keyA), 1e-9, "the clone was refunded")
}

func TestWithOutcomeWinsOverRenderFaults(t *testing.T) {
	h := newHarness(t, WithFaults(fault.Config{RenderError: 1}), WithOutcome(func(string) Outcome { return OutcomeDone }))
	g := h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "p"})
	h.advance(time.Minute)
	assert.Equal(t, mediagen.GenerationStatusDone, h.get(keyA, g.ID).JSON200.Generation.Status)
	assert.Zero(t, h.srv.Faults().Stats().RenderErrors)
}

func TestFaultsSwitchedOffLeaveAHealthyServer(t *testing.T) {
	h := newHarness(t, WithFaults(fault.Config{HTTPStatus: 1, Statuses: []int{503}}))
	resp, _, err := h.try(http.MethodGet, "/v3/pricing", keyA, "")
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)

	require.NoError(t, h.srv.Faults().SetConfig(fault.Config{}))
	resp, _, err = h.try(http.MethodGet, "/v3/pricing", keyA, "")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	g := h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "p"})
	h.advance(time.Minute)
	list := h.assertBooks(keyA, 100)
	require.Len(t, list, 1)
	assert.Equal(t, g.ID, list[0].ID)
	assert.Equal(t, mediagen.GenerationStatusDone, list[0].Status)
}

// TestFaultMixKeepsTheBooks throws every HTTP fault and render fault at a
// run of submissions, heals the server and checks that what was created,
// charged and refunded adds up.
func TestFaultMixKeepsTheBooks(t *testing.T) {
	h := newHarness(t, WithFaults(fault.Config{
		Seed: 7, DropBefore: 0.2, DropAfter: 0.2, HTTPStatus: 0.2, Statuses: []int{500, 503, 429},
		RenderError: 0.2, RenderTimeout: 0.2,
	}))
	accepted := map[string]bool{}
	for range 60 {
		resp, body, err := h.try(http.MethodPost, "/v3/generations", keyA, createBody)
		if err != nil {
			continue
		}
		if resp.StatusCode == http.StatusOK {
			var env api.GenerationEnvelope
			require.NoError(t, json.Unmarshal(body, &env))
			accepted[env.Generation.ID] = true
		}
	}
	st := h.srv.Faults().Stats()
	require.Positive(t, st.DroppedBefore)
	require.Positive(t, st.DroppedAfter)
	require.Positive(t, st.Replaced)
	require.Positive(t, len(accepted))

	require.NoError(t, h.srv.Faults().SetConfig(fault.Config{}))
	h.advance(time.Minute)
	list := h.assertBooks(keyA, 100)
	assert.Len(t, list, len(accepted)+int(st.DroppedAfter), "created = answered + answers lost after processing")
	for id := range accepted {
		assert.Contains(t, ids(list), id)
	}
}

// ids returns the ids of gens.
func ids(gens []mediagen.Generation) []string {
	out := make([]string, len(gens))
	for i, g := range gens {
		out[i] = g.ID
	}
	return out
}
