package otel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
)

// TestForeignWaitUsesClientProviders: a wait for a generation this process
// did not create (no job open for it) records its span and its count, and
// its save's span, with the client's providers, not the global ones, which
// the caller's span comes from.
func TestForeignWaitUsesClientProviders(t *testing.T) {
	for name, wait := range map[string]func(context.Context, *client.Client, string, string) error{
		"Generation": func(ctx context.Context, c *client.Client, id, dir string) error {
			_, err := poll.Generation(ctx, c, id, poll.WithSaveTo(dir))
			return err
		},
		"Generations": func(ctx context.Context, c *client.Client, id, dir string) error {
			_, err := poll.Generations(ctx, c, []string{id}, poll.WithSaveTo(dir))
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := clienttest.NewServer(t)
			g, err := srv.Client().CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"})
			require.NoError(t, err)
			srv.Advance(time.Minute)

			global, own := newRecorder(t), newRecorder(t)
			otel.SetTracerProvider(global.tp)
			otel.SetMeterProvider(global.mp)
			t.Cleanup(func() {
				otel.SetTracerProvider(tracenoop.NewTracerProvider())
				otel.SetMeterProvider(metricnoop.NewMeterProvider())
			})
			ctx, root := otel.Tracer("app").Start(t.Context(), "request")
			c := srv.Client(client.WithTracerProvider(own.tp), client.WithMeterProvider(own.mp))
			require.NoError(t, wait(ctx, c, g.ID, t.TempDir()))
			root.End()

			assert.Equal(t, int64(1), sumInt(own.metrics(t)["mediagen.waits"]), "the client's meter counts the wait")
			assert.Zero(t, sumInt(global.metrics(t)["mediagen.waits"]), "the global meter does not")
			byName := map[string]int{}
			for _, s := range own.spans.GetSpans() {
				byName[s.Name]++
				if s.Name == "mediagen.wait" {
					assert.Equal(t, root.SpanContext().SpanID(), s.Parent.SpanID(), "a child of the caller's span")
				}
			}
			assert.Equal(t, 1, byName["mediagen.wait"], "the client's tracer has the wait")
			assert.Equal(t, 1, byName["mediagen.save"], "and the save")
			for _, s := range global.spans.GetSpans() {
				assert.NotContains(t, []string{"mediagen.wait", "mediagen.save"}, s.Name, "the global tracer has neither")
			}
		})
	}
}
