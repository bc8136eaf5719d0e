package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestExportsToTheCollector runs the example with an httptest server
// standing in for the collector, named by OTEL_EXPORTER_OTLP_ENDPOINT as a
// user names theirs, and reads the spans it received.
func TestExportsToTheCollector(t *testing.T) {
	var mu sync.Mutex
	var posts []string
	names := map[string]int{}
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		assert.NoError(t, err)
		var req coltrace.ExportTraceServiceRequest
		assert.NoError(t, proto.Unmarshal(body, &req), "an OTLP protobuf body")
		mu.Lock()
		defer mu.Unlock()
		posts = append(posts, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+r.Header.Get("X-Tenant"))
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names[s.Name]++
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		_, _ = w.Write(b)
	}))
	t.Cleanup(collector.Close)
	t.Setenv("MEDIAGEN_API_KEY", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "X-Tenant=renders")

	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, t.TempDir()))
	assert.Contains(t, out.String(), "saved under")

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, posts)
	assert.Equal(t, "POST /v1/traces application/x-protobuf renders", posts[0])
	assert.Equal(t, 1, names["mediagen.generation"], "%v", names)
	for _, name := range []string{"mediagen.wait", "mediagen.save", "POST", "GET"} {
		assert.Positive(t, names[name], name)
	}
}
