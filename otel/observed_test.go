package otel_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/client/journal"
)

// A caller that follows a generation by its own GetGeneration loop ends
// its job with Observed: the span carries the terminal status, the cost
// and the refund, and the generation counts as finished once.
func TestObservedEndsJob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults clienttest.Faults
		status mediagen.GenerationStatus
	}{
		{"done", clienttest.Faults{}, mediagen.GenerationStatusDone},
		{"error", clienttest.Faults{Seed: 1, RenderError: 1}, mediagen.GenerationStatusError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder(t)
			srv := clienttest.NewServer(t, clienttest.WithFaults(tc.faults))
			c := srv.Client(client.WithTracerProvider(rec.tp), client.WithMeterProvider(rec.mp))
			g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"})
			require.NoError(t, err)
			c.Observed(t.Context(), g) // not terminal yet: nothing ends
			assert.Empty(t, jobSpans(rec), "the job is still open")
			for !g.Terminal() {
				srv.Advance(time.Second)
				g, err = c.GetGeneration(t.Context(), g.ID)
				require.NoError(t, err)
			}
			require.Equal(t, tc.status, g.Status)
			c.Observed(t.Context(), g)
			c.Observed(t.Context(), g) // twice counts once

			jobs := jobSpans(rec)
			require.Len(t, jobs, 1, "the job ended")
			v, _ := attr(jobs[0], "mediagen.status")
			assert.Equal(t, string(tc.status), v.AsString())
			charged, _ := attr(jobs[0], "mediagen.cost.charged")
			refunded, _ := attr(jobs[0], "mediagen.cost.refunded")
			assert.Positive(t, charged.AsFloat64())
			if tc.status == mediagen.GenerationStatusDone {
				assert.Zero(t, refunded.AsFloat64())
			} else {
				assert.Equal(t, charged.AsFloat64(), refunded.AsFloat64(), "a failed render was refunded")
			}
			m := rec.metrics(t)
			assert.EqualValues(t, 1, sumInt(m["mediagen.generations.finished"], attribute.String("mediagen.status", string(tc.status))))
		})
	}
}

// A generation handed to another process (Release) ends its job there,
// released; the process that finds it terminal continues the recorded
// trace with a resume span, which carries the status, and counts it
// finished once: the trace has one generation span.
func TestReleasedJobContinues(t *testing.T) {
	rec := newRecorder(t)
	srv := clienttest.NewServer(t)
	c := srv.Client(client.WithTracerProvider(rec.tp), client.WithMeterProvider(rec.mp))
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"})
	require.NoError(t, err)
	c.Release(g.ID)
	jobs := jobSpans(rec)
	require.Len(t, jobs, 1, "released: ended and exported")
	first := jobs[0]
	require.Len(t, first.Events, 1)
	assert.Equal(t, "released", first.Events[0].Name)
	_, hasStatus := attr(first, "mediagen.status")
	assert.False(t, hasStatus, "not terminal: no status")

	// Another process: a client of its own, the recorded span as parent.
	other := srv.Client(client.WithTracerProvider(rec.tp), client.WithMeterProvider(rec.mp))
	ctx := trace.ContextWithRemoteSpanContext(t.Context(), first.SpanContext)
	for !g.Terminal() {
		srv.Advance(time.Second)
		g, err = other.GetGeneration(ctx, g.ID)
		require.NoError(t, err)
	}
	other.Observed(ctx, g)
	other.Observed(ctx, g) // once
	jobs = jobSpans(rec)
	require.Len(t, jobs, 2)
	cont := jobs[1]
	assert.Equal(t, "mediagen.generation", first.Name)
	assert.Equal(t, "mediagen.generation.resume", cont.Name)
	assert.Equal(t, first.SpanContext.TraceID(), cont.SpanContext.TraceID())
	assert.Equal(t, first.SpanContext.SpanID(), cont.Parent.SpanID())
	v, _ := attr(cont, "mediagen.status")
	assert.Equal(t, "done", v.AsString())
	v, _ = attr(cont, "mediagen.generation.id")
	assert.Equal(t, g.ID, v.AsString())
	m := rec.metrics(t)
	assert.EqualValues(t, 1, sumInt(m["mediagen.generations.finished"]), "finished once, by the continuation")
	assert.EqualValues(t, 1, sumInt(m["mediagen.generations.submitted"]))
}

// A keyed create that hands back the generation a job of this process
// still follows ends its own span at once; the first job goes on.
func TestReusedKeyEndsItsSpan(t *testing.T) {
	rec := newRecorder(t)
	srv := clienttest.NewServer(t)
	c := srv.Client(client.WithTracerProvider(rec.tp), client.WithJournal(journal.NewMemory()))
	args := client.ImageGenerationArgs{Prompt: "a lighthouse"}
	first, err := c.CreateGeneration(t.Context(), args, client.WithIdempotencyKey("order-1"))
	require.NoError(t, err)
	again, err := c.CreateGeneration(t.Context(), args, client.WithIdempotencyKey("order-1"))
	require.NoError(t, err)
	require.Equal(t, first.ID, again.ID)
	jobs := jobSpans(rec)
	require.Len(t, jobs, 1, "the second call's job ended; the first is open")
	assert.Equal(t, "mediagen.generation.resume", jobs[0].Name, "it continues the first's trace")
	v, _ := attr(jobs[0], "mediagen.reused")
	assert.True(t, v.AsBool())
}

// jobSpans returns the ended job spans: roots and resumes.
func jobSpans(rec *recorder) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range rec.spans.GetSpans() {
		if s.Name == "mediagen.generation" || s.Name == "mediagen.generation.resume" {
			out = append(out, s)
		}
	}
	return out
}
