package otel_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/benchpair"
)

// BenchmarkPairTracing measures a create+get pair against the in-process
// reference server with tracing and metrics on (every span sampled and
// exported to a no-op exporter, a manual metric reader) against the same
// pair with no provider set (OpenTelemetry's global placeholders), the
// sides alternating inside one benchmark (internal/benchpair). BENCHMARKS.md
// has the figures.
func BenchmarkPairTracing(b *testing.B) {
	srv := clienttest.NewServer(b, clienttest.WithBalance(1e9))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	on := srv.Client(client.WithTracerProvider(tp), client.WithMeterProvider(mp))
	off := srv.Client()
	pair := func(c *client.Client) func(b *testing.B) {
		return func(b *testing.B) {
			g, err := c.CreateGeneration(b.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse at dusk"})
			require.NoError(b, err)
			_, err = c.GetGeneration(b.Context(), g.ID)
			require.NoError(b, err)
		}
	}
	benchpair.Run(b, [2]benchpair.Side{{Name: "on", Run: pair(on)}, {Name: "off", Run: pair(off)}})
}
