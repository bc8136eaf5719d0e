package otel_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
)

// TestHandedBackCountedOnce: two clients of one process submit the same
// arguments; the second's attempt fails ambiguously and its search hands
// it the first's generation (as CreateGeneration's documentation warns).
// The service charged once: the generation counts as submitted and
// charged once, and the second call's job ends while the first goes on.
func TestHandedBackCountedOnce(t *testing.T) {
	rec := newRecorder(t)
	srv := clienttest.NewServer(t)
	opts := []client.Option{client.WithTracerProvider(rec.tp), client.WithMeterProvider(rec.mp)}
	first, second := srv.Client(opts...), srv.Client(opts...)
	args := client.ImageGenerationArgs{Prompt: "a lighthouse"}
	g1, err := first.CreateGeneration(t.Context(), args)
	require.NoError(t, err)
	// The second's POST is sent and dropped unread: the client searches.
	require.NoError(t, srv.SetFaults(clienttest.Faults{Seed: 1, DropBefore: 1, Methods: []string{http.MethodPost}}))
	g2, err := second.CreateGeneration(t.Context(), args)
	require.NoError(t, err)
	require.Equal(t, g1.ID, g2.ID, "the search handed back the first's generation")

	m := rec.metrics(t)
	assert.EqualValues(t, 1, sumInt(m["mediagen.generations.submitted"]))
	assert.Equal(t, cents(g1.BalanceUsed), cents(sumFloat(m["mediagen.cost.charged"])))
	assert.Len(t, jobSpans(rec), 1, "the second call's job ended; the first is open")
}
