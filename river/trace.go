package riverjob

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// attemptContext returns the context of one attempt of a job, so that the
// client's spans join the generation's trace (with tracing on, see the
// client's WithTracerProvider):
//   - before the generation was submitted, the trace the job was enqueued
//     under: the W3C traceparent in the job's metadata, as River's
//     OpenTelemetry middleware (otelriver, EnableTracePropagation) writes
//     it, unless ctx has a span already (that middleware's work span,
//     which links to it);
//   - once it was, the generation's own span, whose traceparent the
//     journal recorded with the key (recorded): the attempt's requests and
//     save are its children, on whichever worker runs the attempt, and a
//     span in ctx links to it instead.
func attemptContext(ctx context.Context, metadata []byte, recorded string) context.Context {
	if sc := parse(recorded); sc.IsValid() {
		if sp := trace.SpanFromContext(ctx); sp.IsRecording() {
			sp.AddLink(trace.Link{SpanContext: sc})
			return ctx
		}
		return trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	if trace.SpanContextFromContext(ctx).IsValid() || len(metadata) == 0 {
		return ctx
	}
	var meta struct {
		Traceparent string `json:"traceparent"`
		Tracestate  string `json:"tracestate"`
	}
	if json.Unmarshal(metadata, &meta) != nil {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": meta.Traceparent, "tracestate": meta.Tracestate})
}

// parse reads a W3C traceparent; an invalid span context when it is none.
func parse(traceparent string) trace.SpanContext {
	if traceparent == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
	return trace.SpanContextFromContext(ctx)
}

// TraceMetadata returns job metadata carrying ctx's trace context (W3C
// traceparent and tracestate), for river.InsertOpts.Metadata, so that the
// generation's spans continue the trace the job was enqueued under; nil
// without one. River's OpenTelemetry middleware (otelriver) writes the
// same on every insert.
func TraceMetadata(ctx context.Context) []byte {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	if len(c) == 0 {
		return nil
	}
	b, _ := json.Marshal(c) // a map of strings always encodes
	return b
}
