package otel_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
)

// TestDurationEndsAtTerminal: mediagen.generation.duration is submit to
// terminal, as the README says: the download of the outputs after it
// (poll.WithSaveTo, SaveOutput) is not part of it, though the job span
// lasts until the save ends.
func TestDurationEndsAtTerminal(t *testing.T) {
	const slow = 300 * time.Millisecond
	var srv *clienttest.Server
	for _, tc := range []struct {
		name string
		wait func(t *testing.T, c *client.Client, id string)
	}{
		{"WithSaveTo", func(t *testing.T, c *client.Client, id string) {
			_, err := poll.Generation(t.Context(), c, id, poll.WithSaveTo(t.TempDir()))
			require.NoError(t, err)
		}},
		{"SaveOutput", func(t *testing.T, c *client.Client, id string) {
			var g *mediagen.Generation
			for g == nil || !g.Terminal() { // a loop of the caller's own: SaveOutput ends the job
				var err error
				g, err = c.GetGeneration(t.Context(), id)
				require.NoError(t, err)
				srv.Advance(time.Second)
			}
			_, err := c.SaveOutput(t.Context(), g, t.TempDir())
			require.NoError(t, err)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder(t)
			srv = clienttest.NewServer(t)
			c := srv.Client(client.WithTracerProvider(rec.tp), client.WithMeterProvider(rec.mp),
				client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
					if !strings.HasPrefix(req.URL.Path, "/v3/") {
						time.Sleep(slow) // a large download
					}
					return next(req)
				}))
			g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"})
			require.NoError(t, err)
			tc.wait(t, c, g.ID)

			jobs := jobSpans(rec)
			require.Len(t, jobs, 1)
			assert.GreaterOrEqual(t, jobs[0].EndTime.Sub(jobs[0].StartTime), slow, "the job span lasts until the save ends")
			h, ok := rec.metrics(t)["mediagen.generation.duration"].(metricdata.Histogram[float64])
			require.True(t, ok)
			require.Len(t, h.DataPoints, 1)
			assert.EqualValues(t, 1, h.DataPoints[0].Count)
			assert.Less(t, h.DataPoints[0].Sum, slow.Seconds(), "the save is not part of the duration")
		})
	}
}
