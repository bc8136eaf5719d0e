package fault

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// backend is the handler behind the injector; it counts the requests it
// processed, which is how tests tell "not processed" from "processed".
type backend struct {
	calls atomic.Int64
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Backend", "yes")
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, r.Method+" "+r.URL.Path+" "+string(body))
}

// serve starts an HTTP/1.1 test server with in wrapped around a backend.
func serve(t *testing.T, in *Injector) (*httptest.Server, *backend) {
	t.Helper()
	b := &backend{}
	ts := httptest.NewServer(in.Wrap(b))
	t.Cleanup(ts.Close)
	return ts, b
}

// plainClient never reuses connections: Go's transport silently resends an
// idempotent request that failed on a reused connection, which would hide the
// faults under test.
func plainClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

type answer struct {
	status int
	header http.Header
	body   string
}

// do sends one request and reads the whole answer.
func do(ctx context.Context, c *http.Client, method, url, body string) (answer, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return answer{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}, err
}

func mustNew(t *testing.T, cfg Config) *Injector {
	t.Helper()
	in, err := New(cfg)
	require.NoError(t, err)
	return in
}
