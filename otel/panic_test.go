package otel_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
)

// TestCallbackPanicEndsSpans: a panic in a callback of the caller's (an
// OnUpdate, an OpenFunc) leaves no span of a wait, an attempt or a save
// open; the save that panicked does not end its job as saved.
func TestCallbackPanicEndsSpans(t *testing.T) {
	boom := func(*mediagen.Generation) { panic("boom") }
	open := func(context.Context, *mediagen.Generation, string, string) (io.WriteCloser, error) { panic("boom") }
	for name, run := range map[string]func(*testing.T, *clienttest.Server, *client.Client, *mediagen.Generation){
		"Generation OnUpdate": func(t *testing.T, srv *clienttest.Server, c *client.Client, g *mediagen.Generation) {
			_, _ = poll.Generation(t.Context(), c, g.ID, poll.OnUpdate(boom))
		},
		"Generations OnUpdate": func(t *testing.T, srv *clienttest.Server, c *client.Client, g *mediagen.Generation) {
			_, _ = poll.Generations(t.Context(), c, []string{g.ID}, poll.OnUpdate(boom))
		},
		"SaveOutputFunc": func(t *testing.T, srv *clienttest.Server, c *client.Client, g *mediagen.Generation) {
			srv.Advance(time.Hour) // a check of the caller's: no wait ends the job
			g, err := c.GetGeneration(t.Context(), g.ID)
			require.NoError(t, err)
			require.Equal(t, mediagen.GenerationStatusDone, g.Status)
			_ = c.SaveOutputFunc(t.Context(), g, open)
		},
	} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder(t)
			started := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(started), sdktrace.WithSyncer(rec.spans))
			srv := clienttest.NewServer(t)
			c := srv.Client(client.WithTracerProvider(tp), client.WithMeterProvider(rec.mp))
			g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"})
			require.NoError(t, err)
			require.Panics(t, func() { run(t, srv, c, g) })

			ended := map[string]int{}
			for _, s := range started.Ended() {
				ended[s.Name()]++
			}
			for _, s := range started.Started() {
				if s.Name() != "mediagen.generation" && ended[s.Name()] == 0 {
					t.Errorf("span %s never ended", s.Name())
				}
				ended[s.Name()]--
			}
			for _, s := range rec.spans.GetSpans() {
				switch s.Name {
				case "mediagen.generation":
					_, ok := attr(s, "mediagen.status")
					assert.False(t, ok, "the job did not end as saved")
				case "mediagen.save":
					assert.Equal(t, codes.Error, s.Status.Code, "the save failed")
				}
			}
		})
	}
}
