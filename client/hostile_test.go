package client_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

// endless is a body that never ends: a hostile or broken host.
type endless struct{ sent *atomic.Int64 }

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.sent.Add(int64(len(p)))
	return len(p), nil
}

// hostile answers every request with a body that never ends, chunked, or
// with a Content-Length past any limit; it counts requests and bytes.
type hostile struct {
	requests atomic.Int32
	sent     atomic.Int64
	declared int64 // a Content-Length to announce, 0 for none
}

func (h *hostile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.requests.Add(1)
	if h.declared > 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(h.declared, 10))
	}
	w.Header().Set("Content-Type", "application/json")
	if !strings.HasPrefix(r.URL.Path, "/storage") {
		_, _ = io.WriteString(w, `{"generation":{"id":"g","params":{"prompt":"`)
	}
	_, _ = io.Copy(w, io.LimitReader(endless{&h.sent}, 1<<40))
}

func hostileClient(t *testing.T, h *hostile, opts ...client.Option) (*client.Client, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := client.New("mg_key_hostile_123456", append([]client.Option{client.WithBaseURL(srv.URL),
		client.WithRetryWait(time.Millisecond, 2*time.Millisecond)}, opts...)...)
	require.NoError(t, err)
	return c, srv.URL
}

// A never-ending output stops at the limit with ErrTooLarge, is not
// retried, and SaveOutput leaves no file, partial or whole, behind.
func TestDownloadStopsAtTheLimit(t *testing.T) {
	const limit = 1 << 20
	for _, declared := range []int64{0, 40 << 30} {
		h := &hostile{declared: declared}
		c, url := hostileClient(t, h, client.WithMaxDownload(limit))
		dir := t.TempDir()
		g := &mediagen.Generation{ID: "gen_1", Status: mediagen.GenerationStatusDone, Kind: mediagen.KindImage,
			Output: mediagen.Output{Image: url + "/storage/out.png", MIME: "image/png"}}
		_, err := c.SaveOutput(context.Background(), g, dir)
		require.ErrorIs(t, err, client.ErrTooLarge, "declared %d", declared)
		assert.Contains(t, err.Error(), "the asset")
		assert.Equal(t, int32(1), h.requests.Load(), "not retried as transient")
		assert.Less(t, h.sent.Load(), int64(limit+8<<20), "the transfer stopped near the limit")
		left, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, left, "no file left behind")

		var buf bytes.Buffer
		err = c.Download(context.Background(), url+"/storage/out.png", &buf)
		require.ErrorIs(t, err, client.ErrTooLarge)
		assert.LessOrEqual(t, buf.Len(), limit)
	}
	_, err := client.New("k123456", client.WithBaseURL("http://127.0.0.1:1"), client.WithMaxDownload(0))
	assert.ErrorContains(t, err, "WithMaxDownload")
}

// An API answer is read under a cap: a never-ending one fails with
// ErrTooLarge once the cap is read, and is not retried.
func TestAnswerIsReadUnderACap(t *testing.T) {
	for _, declared := range []int64{0, 100 << 20} {
		h := &hostile{declared: declared}
		c, _ := hostileClient(t, h)
		_, err := c.GetGeneration(context.Background(), "gen_1")
		require.ErrorIs(t, err, client.ErrTooLarge, "declared %d", declared)
		assert.Equal(t, int32(1), h.requests.Load(), "not retried")
		assert.Less(t, h.sent.Load(), int64(16<<20), "read stopped at the cap")
	}
}

// The key never follows a redirect off the base URL's origin (here the
// same host on another port), and a create follows no redirect: the other
// server's answer is never taken as the created generation.
func TestRedirectsKeepTheKeyAndTheCreate(t *testing.T) {
	var keys atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			keys.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"generation":{"id":"gen_elsewhere","status":"pending"}}`)
	}))
	t.Cleanup(other.Close)
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New("mg_key_redirect_123456", client.WithBaseURL(srv.URL))
	require.NoError(t, err)

	g, err := c.CreateGeneration(context.Background(), client.ImageGenerationArgs{Prompt: "a heron"})
	require.Error(t, err)
	assert.Nil(t, g)
	assert.Contains(t, err.Error(), "307", "the redirect is the answer")
	assert.Equal(t, int32(1), posts.Load(), "sent once: a redirect is no ambiguous failure")

	_, err = c.GetGeneration(context.Background(), "gen_1")
	require.Error(t, err)
	assert.Zero(t, keys.Load(), "the key never reached the other origin")
}
