package otel_test

import (
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
)

// cutBody is an answer's body that breaks after its first bytes.
type cutBody struct{ io.ReadCloser }

func (b cutBody) Read(p []byte) (int, error) {
	n, _ := b.ReadCloser.Read(p[:min(len(p), 8)])
	return n, io.ErrUnexpectedEOF
}

// TestCutAnswerAttemptFails: a 200 whose body breaks midway is a failed
// attempt, retried: its span has an error status and error.type, and it is
// not counted as an ok request.
func TestCutAnswerAttemptFails(t *testing.T) {
	rec := newRecorder(t)
	srv := clienttest.NewServer(t)
	var cut atomic.Bool
	c := srv.Client(client.WithTracerProvider(rec.tp), client.WithMeterProvider(rec.mp),
		client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			resp, err := next(req)
			if err == nil && req.Method == http.MethodGet && cut.CompareAndSwap(true, false) {
				resp.Body = cutBody{resp.Body}
			}
			return resp, err
		}))
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"})
	require.NoError(t, err)
	cut.Store(true)
	_, err = c.GetGeneration(t.Context(), g.ID)
	require.NoError(t, err, "the cut answer was retried")

	var gets []tracetest.SpanStub
	for _, s := range rec.spans.GetSpans() {
		if s.Name == http.MethodGet {
			gets = append(gets, s)
		}
	}
	require.Len(t, gets, 2, "two attempts")
	assert.Equal(t, codes.Error, gets[0].Status.Code, "the cut attempt failed")
	_, ok := attr(gets[0], "error.type")
	assert.True(t, ok, "the cut attempt has an error.type")
	assert.Equal(t, codes.Unset, gets[1].Status.Code)
	m := rec.metrics(t)
	get := attribute.String("http.request.method", http.MethodGet)
	assert.EqualValues(t, 1, sumInt(m["mediagen.requests"], get, attribute.String("mediagen.outcome", "ok")), "one GET was ok")
	assert.EqualValues(t, 2, sumInt(m["mediagen.requests"], get))
}
