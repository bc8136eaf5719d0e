package otel_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// recorder is a tracer and a meter provider that keep what they get.
type recorder struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(r.spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		_ = r.tp.Shutdown(context.Background())
		_ = r.mp.Shutdown(context.Background())
	})
	return r
}

// metrics returns the data points of every instrument by name.
func (r *recorder) metrics(t *testing.T) map[string]metricdata.Aggregation {
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// sumInt returns the sum of an int counter's points whose attributes
// include match.
func sumInt(a metricdata.Aggregation, match ...attribute.KeyValue) int64 {
	s, ok := a.(metricdata.Sum[int64])
	if !ok {
		return 0
	}
	var n int64
	for _, p := range s.DataPoints {
		if has(p.Attributes, match) {
			n += p.Value
		}
	}
	return n
}

func sumFloat(a metricdata.Aggregation) float64 {
	s, ok := a.(metricdata.Sum[float64])
	if !ok {
		return 0
	}
	var n float64
	for _, p := range s.DataPoints {
		n += p.Value
	}
	return n
}

func has(set attribute.Set, match []attribute.KeyValue) bool {
	for _, kv := range match {
		v, ok := set.Value(kv.Key)
		if !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// attr returns a span's attribute.
func attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// noSecret fails when any name, attribute, event or status of spans
// carries one of secrets.
func noSecret(t *testing.T, spans tracetest.SpanStubs, secrets []string) {
	t.Helper()
	check := func(where, s string) {
		for _, sec := range secrets {
			if sec != "" && strings.Contains(s, sec) {
				t.Errorf("%s carries a secret (%q): %q", where, sec, s)
			}
		}
	}
	for _, s := range spans {
		check("span name", s.Name)
		check("status", s.Status.Description)
		for _, kv := range s.Attributes {
			check(s.Name+" attribute "+string(kv.Key), kv.Value.String())
		}
		for _, ev := range s.Events {
			check(s.Name+" event", ev.Name)
			for _, kv := range ev.Attributes {
				check(s.Name+" event "+ev.Name+" attribute "+string(kv.Key), kv.Value.String())
			}
		}
		for _, l := range s.Links {
			for _, kv := range l.Attributes {
				check(s.Name+" link attribute", kv.Value.String())
			}
		}
	}
}
