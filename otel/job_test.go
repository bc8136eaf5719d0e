package otel_test

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
)

// jobs is how many generations the fault test runs: MEDIAGEN_OTEL_JOBS, or 100.
func jobs(t *testing.T) int {
	if s := os.Getenv("MEDIAGEN_OTEL_JOBS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		return n
	}
	if testing.Short() {
		return 20
	}
	return 100
}

// faults are 20% of requests and renders gone wrong: 5xx answers,
// connections dropped before and after the server acted, renders ended in
// error or timeout.
var faults = clienttest.Faults{Seed: 31, HTTPStatus: 0.05, DropBefore: 0.05, DropAfter: 0.05, RenderError: 0.03, RenderTimeout: 0.02}

// TestJobTraces submits, waits for and saves N generations under 20%
// injected faults and checks that each is one trace with one root, no
// orphan span, the job's attributes, no secret, and metrics that match
// the reference server's own counts.
func TestJobTraces(t *testing.T) {
	n := jobs(t)
	rec := newRecorder(t)
	srv := clienttest.NewServer(t, clienttest.WithBalance(1e6), clienttest.WithFaults(faults))
	c := srv.Client(client.WithTracerProvider(rec.tp), client.WithMeterProvider(rec.mp), client.WithMaxRetries(10))
	startBalance := srv.Balance()
	dir := t.TempDir()

	var mu sync.Mutex
	created := map[string]*mediagen.Generation{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var args client.Args = client.ImageGenerationArgs{Prompt: fmt.Sprintf("a lighthouse, take %d", i)}
			if i%4 == 3 {
				args = client.VoiceoverArgs{VoiceID: "ava-warm-narrator", Script: fmt.Sprintf("Take %d.", i)}
			}
			g, err := c.CreateGeneration(t.Context(), args)
			if !assert.NoError(t, err) {
				return
			}
			got, err := poll.Generation(t.Context(), c, g.ID, poll.WithKind(g.Kind), poll.WithSaveTo(dir))
			var failed *poll.FailedError
			if err != nil && !assert.ErrorAs(t, err, &failed) {
				return
			}
			mu.Lock()
			created[got.ID] = got
			mu.Unlock()
		}()
	}
	wg.Wait()
	require.Len(t, created, n)

	spans := rec.spans.GetSpans()
	byTrace := map[trace.TraceID]tracetest.SpanStubs{}
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		byTrace[s.SpanContext.TraceID()] = append(byTrace[s.SpanContext.TraceID()], s)
		ids[s.SpanContext.SpanID()] = true
	}
	jobRoots := map[string]tracetest.SpanStub{}
	for tid, ss := range byTrace {
		roots := 0
		for _, s := range ss {
			if !s.Parent.IsValid() {
				roots++
				if s.Name == "mediagen.generation" {
					v, _ := attr(s, "mediagen.generation.id")
					jobRoots[v.AsString()] = s
				}
				continue
			}
			assert.Equal(t, tid, s.Parent.TraceID(), "span %s", s.Name)
			assert.True(t, ids[s.Parent.SpanID()], "orphan span %s", s.Name)
		}
		assert.Equal(t, 1, roots, "trace %s has %d roots", tid, roots)
	}
	assert.Len(t, jobRoots, n, "one job trace per generation")

	// The job's attributes.
	var charged, refunded float64
	endedBy := map[string]int{}
	for id, g := range created {
		root, ok := jobRoots[id]
		if !assert.True(t, ok, "no job trace for %s", id) {
			continue
		}
		for key, want := range map[string]any{
			"mediagen.feature": string(g.Feature), "mediagen.kind": string(g.Kind),
			"mediagen.status": string(g.Status), "mediagen.cost.charged": g.BalanceUsed,
		} {
			v, ok := attr(root, key)
			if assert.True(t, ok, "%s: no %s", id, key) {
				assert.Equal(t, want, v.AsInterface(), "%s: %s", id, key)
			}
		}
		for _, key := range []string{"mediagen.cost.refunded", "mediagen.retries", "mediagen.wait.ended_by"} {
			_, ok := attr(root, key)
			assert.True(t, ok, "%s: no %s", id, key)
		}
		v, _ := attr(root, "mediagen.wait.ended_by")
		endedBy[v.AsString()]++
		charged += g.BalanceUsed
		if g.Status != mediagen.GenerationStatusDone {
			refunded += g.BalanceUsed
		}
	}
	assert.Equal(t, n, endedBy["poll"], "without a hub every wait ends by polling")

	// No secret anywhere: the key, the webhook secret, and the signed
	// query of every output URL.
	secrets := []string{srv.APIKey(), srv.WebhookSecret(), "X-Amz", "sig=", "signature=", "expires="}
	for _, g := range created {
		for _, raw := range []string{g.Output.URL(), g.Output.Poster} {
			if u, err := url.Parse(raw); err == nil && u.RawQuery != "" {
				secrets = append(secrets, u.RawQuery, u.Query().Get("signature"))
			}
		}
	}
	noSecret(t, spans, secrets)

	// The reference server's own counts: every generation of the project,
	// what it charged, what it refunded, and the balance they add up to.
	var serverCharged, serverRefunded float64
	serverCount := 0
	for g, err := range c.Generations(t.Context(), client.ListParams{}) {
		require.NoError(t, err)
		serverCount++
		serverCharged += g.BalanceUsed
		if g.Status == mediagen.GenerationStatusError || g.Status == mediagen.GenerationStatusTimeout {
			serverRefunded += g.BalanceUsed
		}
	}
	m := rec.metrics(t)
	assert.Equal(t, int64(serverCount), sumInt(m["mediagen.generations.submitted"]))
	assert.Equal(t, int64(serverCount), sumInt(m["mediagen.generations.finished"]))
	assert.Equal(t, cents(serverCharged), cents(sumFloat(m["mediagen.cost.charged"])))
	assert.Equal(t, cents(serverRefunded), cents(sumFloat(m["mediagen.cost.refunded"])))
	assert.Equal(t, cents(charged), cents(serverCharged))
	assert.Equal(t, cents(refunded), cents(serverRefunded))
	assert.Equal(t, cents(startBalance-srv.Balance()), cents(serverCharged-serverRefunded))
	assert.Equal(t, int64(n), sumInt(m["mediagen.waits"], attribute.String("mediagen.wait.ended_by", "poll")))
	counts := srv.FaultCounts()
	t.Logf("%d generations, %d spans, faults %+v, retries %d, searches %d", n, len(spans), counts,
		sumInt(m["mediagen.retries"]), sumInt(m["mediagen.searches"]))
	assert.Positive(t, sumInt(m["mediagen.retries"])+sumInt(m["mediagen.searches"]), "faults were retried or searched for")
}

// cents rounds USD to the service's precision, 1/10,000 USD.
func cents(usd float64) int64 { return int64(math.Round(usd * 10000)) }
