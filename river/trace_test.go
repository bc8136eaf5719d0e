package riverjob_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	riverjob "github.com/mediagen/mediagen-go/river"
)

// A job enqueued under a span carries its trace through the queue: the
// generation's span continues it and ends, released, when the job snoozes;
// the attempt that finds the render done (whichever worker runs it) checks,
// saves and ends the generation in a resume span, a child of that span: the
// trace has one generation span.
func TestJobCarriesTraceThroughQueue(t *testing.T) {
	e := newEnv(t, clienttest.WithRenderScale(0.1))
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	e.worker(t, 2, e.client(client.WithTracerProvider(tp)), riverjob.WithSaveTo(t.TempDir()))

	ctx, enqueue := tp.Tracer("test").Start(t.Context(), "enqueue")
	ja, err := riverjob.NewArgs("k000", client.AvatarArgs{VoiceID: "ava-warm-narrator", Script: "k000 a lighthouse", PermissionConfirmed: true})
	require.NoError(t, err)
	_, err = e.rc.Insert(ctx, ja, &river.InsertOpts{Metadata: riverjob.TraceMetadata(ctx)})
	require.NoError(t, err)
	enqueue.End()
	jobs := e.waitJobs(t, time.Minute)
	require.Len(t, jobs[rivertype.JobStateCompleted], 1)

	byName := map[string][]tracetest.SpanStub{}
	for _, s := range spans.GetSpans() {
		byName[s.Name] = append(byName[s.Name], s)
	}
	require.Len(t, byName["mediagen.generation"], 1, "the submit's, released")
	require.Len(t, byName["mediagen.generation.resume"], 1, "its continuation's")
	job, cont := byName["mediagen.generation"][0], byName["mediagen.generation.resume"][0]
	trace := enqueue.SpanContext().TraceID()
	assert.Equal(t, trace, job.SpanContext.TraceID(), "the generation continues the enqueuer's trace")
	assert.Equal(t, enqueue.SpanContext().SpanID(), job.Parent.SpanID())
	require.Len(t, job.Events, 1)
	assert.Equal(t, "released", job.Events[0].Name)
	assert.Equal(t, job.SpanContext.SpanID(), cont.Parent.SpanID(), "the last attempt continues the generation")
	status := ""
	for _, kv := range cont.Attributes {
		if kv.Key == "mediagen.status" {
			status = kv.Value.AsString()
		}
	}
	assert.Equal(t, "done", status)
	require.NotEmpty(t, byName["GET"], "the job snoozed while the render ran, then checked")
	for _, s := range append(byName["GET"], byName["mediagen.save"]...) {
		assert.Equal(t, trace, s.SpanContext.TraceID(), "%s is in the generation's trace", s.Name)
	}
	require.Len(t, byName["mediagen.save"], 1)
	assert.Equal(t, job.SpanContext.SpanID(), byName["mediagen.save"][0].Parent.SpanID())
}

// A job's generation span ends in the worker that followed it to the end,
// with the terminal status: also when nothing is saved and when the
// render failed.
func TestJobSpansEndWithTheirStatus(t *testing.T) {
	e := newEnv(t, clienttest.WithFaults(clienttest.Faults{Seed: 3, RenderError: 1, RenderFeatures: []mediagen.Feature{"audio/voiceover"}}))
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	e.worker(t, 2, e.client(client.WithTracerProvider(tp), client.WithMeterProvider(mp))) // no folder: nothing is saved
	e.insert(t, []client.Args{
		client.ImageGenerationArgs{Prompt: "k000 a lighthouse"},
		client.VoiceoverArgs{VoiceID: "ava-warm-narrator", Script: "k001 a lighthouse"},
	})
	jobs := e.waitJobs(t, time.Minute)
	require.Len(t, jobs[rivertype.JobStateCompleted], 1)
	require.Len(t, jobs[rivertype.JobStateCancelled], 1, "the failed render")

	// Each generation's trace holds exactly one job span with a status.
	statuses := map[string][]string{}
	for _, s := range spans.GetSpans() {
		if s.Name != "mediagen.generation" && s.Name != "mediagen.generation.resume" {
			continue
		}
		var kind, status string
		for _, kv := range s.Attributes {
			switch kv.Key {
			case "mediagen.kind":
				kind = kv.Value.AsString()
			case "mediagen.status":
				status = kv.Value.AsString()
			}
		}
		if status != "" {
			statuses[kind] = append(statuses[kind], status)
		}
	}
	assert.Equal(t, map[string][]string{"image": {"done"}, "audio": {"error"}}, statuses)

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(t.Context(), &rm))
	finished := int64(0)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "mediagen.generations.finished" {
				for _, p := range sum.DataPoints {
					finished += p.Value
				}
			}
		}
	}
	assert.EqualValues(t, 2, finished, "each generation counts as finished once")
}
