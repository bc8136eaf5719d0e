package otel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/client/journal"
)

// TestFailedSubmitKeepsKeyHashed: a keyed create that fails with an error
// naming its key (the key used with other arguments) ends its job as
// failed, with error.type, and no span carries the key in clear.
func TestFailedSubmitKeepsKeyHashed(t *testing.T) {
	rec := newRecorder(t)
	srv := clienttest.NewServer(t)
	c := srv.Client(client.WithTracerProvider(rec.tp), client.WithJournal(journal.NewMemory()))
	const key = "order-8-customer-ann@example.com"
	_, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"}, client.WithIdempotencyKey(key))
	require.NoError(t, err)
	_, err = c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a harbour"}, client.WithIdempotencyKey(key))
	require.ErrorIs(t, err, client.ErrIdempotencyMismatch)
	require.Contains(t, err.Error(), key, "the error names the key")

	jobs := jobSpans(rec)
	require.Len(t, jobs, 1, "the failed create's job ended; the first is open")
	assert.Equal(t, codes.Error, jobs[0].Status.Code)
	_, ok := attr(jobs[0], "error.type")
	assert.True(t, ok)
	noSecret(t, rec.spans.GetSpans(), []string{key, srv.APIKey()})
}
