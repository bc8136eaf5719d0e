package otel_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
)

// TestAttemptSpanConventions: each HTTP attempt's span has the client
// conventions' attributes: resend_count only on a resend, the status
// code, error.type on the failed one, url.full without its query.
func TestAttemptSpanConventions(t *testing.T) {
	rec := newRecorder(t)
	srv := clienttest.NewServer(t)
	c := srv.Client(client.WithTracerProvider(rec.tp), client.WithMeterProvider(rec.mp))
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a lighthouse"})
	require.NoError(t, err)
	require.NoError(t, srv.SetFaults(clienttest.Faults{Seed: 1, HTTPStatus: 1, Statuses: []int{503}, Methods: []string{http.MethodGet}}))
	_, err = c.GetGeneration(t.Context(), g.ID, client.WithMaxRetries(1))
	require.Error(t, err)
	require.NoError(t, srv.SetFaults(clienttest.Faults{}))
	_, err = c.ListGenerations(t.Context(), client.ListParams{Limit: 5, Feature: "image/generation"})
	require.NoError(t, err)

	base, err := url.Parse(srv.URL())
	require.NoError(t, err)
	port, err := strconv.Atoi(base.Port())
	require.NoError(t, err)
	var gets []tracetest.SpanStub
	for _, s := range rec.spans.GetSpans() {
		if s.Name == http.MethodGet {
			gets = append(gets, s)
		}
	}
	require.Len(t, gets, 3)
	for i, s := range gets {
		m, _ := attr(s, "http.request.method")
		assert.Equal(t, "GET", m.AsString())
		addr, _ := attr(s, "server.address")
		assert.Equal(t, base.Hostname(), addr.AsString())
		p, _ := attr(s, "server.port")
		assert.EqualValues(t, port, p.AsInt64())
		full, _ := attr(s, "url.full")
		assert.True(t, strings.HasPrefix(full.AsString(), srv.URL()+"/"), full.AsString())
		assert.NotContains(t, full.AsString(), "?")
		n, resent := attr(s, "http.request.resend_count")
		assert.Equal(t, i == 1, resent, "resend_count only on the resend")
		if i == 1 {
			assert.EqualValues(t, 1, n.AsInt64())
		}
		code, _ := attr(s, "http.response.status_code")
		et, failed := attr(s, "error.type")
		if i < 2 {
			assert.EqualValues(t, 503, code.AsInt64())
			assert.Equal(t, "503", et.AsString())
			assert.Equal(t, codes.Error, s.Status.Code)
		} else {
			assert.EqualValues(t, 200, code.AsInt64())
			assert.False(t, failed)
		}
	}
}
