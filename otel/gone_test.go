package otel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
)

// TestGoneGenerationEndsItsJob: a generation deleted while this process
// follows it ends its job when a wait finds it gone, with a "gone" event
// and no status, instead of leaving the span open until it is pushed out
// as untracked; it does not count as finished.
func TestGoneGenerationEndsItsJob(t *testing.T) {
	for name, wait := range map[string]func(*testing.T, *client.Client, string) error{
		"Generation": func(t *testing.T, c *client.Client, id string) error {
			_, err := poll.Generation(t.Context(), c, id)
			return err
		},
		"Generations": func(t *testing.T, c *client.Client, id string) error {
			results, err := poll.Generations(t.Context(), c, []string{id})
			require.Len(t, results, 1)
			assert.ErrorIs(t, err, results[0].Err, "the joined error holds the id's")
			return results[0].Err
		},
	} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder(t)
			srv := clienttest.NewServer(t)
			c := srv.Client(client.WithTracerProvider(rec.tp), client.WithMeterProvider(rec.mp))
			g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a short-lived kite"})
			require.NoError(t, err)
			require.NoError(t, srv.Client().DeleteGeneration(t.Context(), g.ID))

			var gone *poll.GoneError
			require.ErrorAs(t, wait(t, c, g.ID), &gone)
			spans := jobSpans(rec)
			require.Len(t, spans, 1, "the job span ended")
			var events []string
			for _, e := range spans[0].Events {
				events = append(events, e.Name)
			}
			assert.Contains(t, events, "gone")
			assert.Zero(t, sumInt(rec.metrics(t)["mediagen.generations.finished"]))
		})
	}
}
