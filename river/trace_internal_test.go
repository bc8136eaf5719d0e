package riverjob

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// Which trace an attempt's spans join: the generation's once the journal
// recorded it, else the enqueuer's from the metadata; a span already in
// the context (River's OpenTelemetry middleware) is kept, linked to the
// generation.
func TestAttemptContext(t *testing.T) {
	const (
		generation = "00-11111111111111111111111111111111-2222222222222222-01"
		enqueuer   = "00-33333333333333333333333333333333-4444444444444444-01"
	)
	gen, enq := parse(generation), parse(enqueuer)
	require.True(t, gen.IsValid())
	meta := []byte(`{"traceparent":"` + enqueuer + `","other":1}`)
	bg := context.Background()

	got := trace.SpanContextFromContext(attemptContext(bg, meta, generation))
	assert.True(t, got.Equal(gen.WithRemote(true)), "a later attempt continues the generation, on any worker")
	got = trace.SpanContextFromContext(attemptContext(bg, meta, ""))
	assert.True(t, got.Equal(enq.WithRemote(true)), "the submit continues the enqueuer")
	for _, bad := range [][]byte{nil, []byte(`not json`), []byte(`{"traceparent":"00-zz"}`)} {
		assert.False(t, trace.SpanContextFromContext(attemptContext(bg, bad, "")).IsValid(), "%s", bad)
	}

	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	ctx, work := tp.Tracer("test").Start(bg, "river.work")
	assert.Equal(t, ctx, attemptContext(ctx, meta, ""), "the middleware's span stays the parent")
	assert.Equal(t, ctx, attemptContext(ctx, meta, generation))
	work.End()
	require.Len(t, spans.GetSpans(), 1)
	links := spans.GetSpans()[0].Links
	require.Len(t, links, 1, "the work span links to the generation")
	assert.Equal(t, gen.SpanID(), links[0].SpanContext.SpanID())

	assert.Nil(t, TraceMetadata(bg), "no trace, no metadata")
	assert.JSONEq(t, `{"traceparent":"`+enqueuer+`"}`, string(TraceMetadata(trace.ContextWithRemoteSpanContext(bg, enq))))
}
