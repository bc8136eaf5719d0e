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
	"github.com/mediagen/mediagen-go/internal/proctest"
)

// BenchmarkPairTracing measures a create+get pair against the in-process
// reference server with tracing and metrics on (every span sampled and
// exported to a no-op exporter, a manual metric reader) against the same
// pair with no provider set (OpenTelemetry's global placeholders), the
// sides alternating inside one benchmark (internal/benchpair). BENCHMARKS.md
// has the figures.
func BenchmarkPairTracing(b *testing.B) {
	srv := clienttest.NewServer(b, clienttest.WithBalance(1e9))
	pairTracing(b, srv.Client)
}

// BenchmarkPairTracingServerProcess is [BenchmarkPairTracing] against the
// reference server command in a process of its own, on loopback, as the
// service is to a user: the server's work and garbage are not the
// client's.
func BenchmarkPairTracingServerProcess(b *testing.B) {
	vars := proctest.RefServer(b, "-addr", "127.0.0.1:0", "-api-key", clienttest.APIKey, "-balance", "1000000000")
	pairTracing(b, func(opts ...client.Option) *client.Client {
		c, err := client.New(clienttest.APIKey, append(opts, client.WithBaseURL(vars["MEDIAGEN_BASE_URL"]))...)
		require.NoError(b, err)
		return c
	})
}

// pairTracing runs the pair on clients newClient makes, one with tracing
// and metrics on and one with them off.
func pairTracing(b *testing.B, newClient func(...client.Option) *client.Client) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	on := newClient(client.WithTracerProvider(tp), client.WithMeterProvider(mp))
	off := newClient()
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
