package client_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

// storageStub answers PUTs with statuses in turn (the last one repeats) and
// records what each received.
type storageStub struct {
	statuses []int
	mu       sync.Mutex
	got      []storagePut
}

type storagePut struct {
	body   string
	header http.Header
}

func (s *storageStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.got = append(s.got, storagePut{string(b), r.Header.Clone()})
	code := s.statuses[min(len(s.got), len(s.statuses))-1]
	s.mu.Unlock()
	if code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(code)
	if code >= 400 {
		_, _ = io.WriteString(w, `{"error":{"code":"e","message":"storage says no"}}`)
	}
}

func (s *storageStub) puts() []storagePut {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]storagePut(nil), s.got...)
}

func newStorage(t *testing.T, statuses ...int) (*storageStub, *mediagen.UploadURL) {
	t.Helper()
	stub := &storageStub{statuses: statuses}
	srv := httptest.NewServer(stub)
	t.Cleanup(srv.Close)
	return stub, &mediagen.UploadURL{
		File: mediagen.File{ID: "file_1"}, UploadURL: srv.URL + "/storage/file_1?sig=secret", Method: mediagen.UploadURLMethodPUT,
		Headers: mediagen.UploadHeaders{ContentType: "text/plain", ContentLength: 5}, ExpiresIn: 900,
	}
}

func storageClient(t *testing.T, clk client.Clock, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New("mg_secret_key", append([]client.Option{client.WithBaseURL("http://127.0.0.1:1"), client.WithClock(clk)}, opts...)...)
	require.NoError(t, err)
	return c
}

// PutUpload sends exactly the signed headers and never the key, and retries
// transient failures (500 included) of a body it can rewind, waiting on the
// client's clock.
func TestPutUploadRetriesARewindableBody(t *testing.T) {
	stub, u := newStorage(t, 500, 503, 429, 200)
	clk := newTestClock()
	c := storageClient(t, clk, client.WithRetryWait(time.Millisecond, 10*time.Second))
	body := strings.NewReader("..hello")
	_, _ = body.Seek(2, io.SeekStart) // the upload starts where the body is
	require.NoError(t, c.PutUpload(context.Background(), u, body))
	puts := stub.puts()
	require.Len(t, puts, 4)
	for _, p := range puts {
		assert.Equal(t, "hello", p.body, "every attempt sends the bytes from the start")
		assert.Equal(t, "text/plain", p.header.Get("Content-Type"))
		assert.Equal(t, "5", p.header.Get("Content-Length"))
		assert.Empty(t, p.header.Get("Authorization"), "never the API key")
	}
	waits := clk.Waits()
	require.Len(t, waits, 3, "waits on the client's clock")
	assert.Less(t, waits[0], 10*time.Millisecond)
	assert.Equal(t, time.Second, waits[2], "the Retry-After of the 429 is honoured")
}

// A body that cannot be rewound is sent once; a transient failure says so.
func TestPutUploadOneShotBody(t *testing.T) {
	stub, u := newStorage(t, 503, 200)
	c := storageClient(t, newTestClock())
	err := c.PutUpload(context.Background(), u, io.MultiReader(strings.NewReader("hello")))
	var se *client.StorageError
	require.ErrorAs(t, err, &se)
	assert.True(t, se.Retryable)
	assert.Equal(t, http.StatusServiceUnavailable, se.StatusCode)
	assert.Equal(t, "storage says no", se.Message)
	assert.Len(t, stub.puts(), 1)
	assert.NotContains(t, err.Error(), "secret", "no signed URL in the error")
}

// A pipe (os.Stdin, os.Pipe) is an *os.File, an io.Seeker that cannot
// seek: it is sent once, as any body that cannot be rewound.
func TestPutUploadFromAPipe(t *testing.T) {
	stub, u := newStorage(t, 200)
	c := storageClient(t, newTestClock())
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	go func() { _, _ = io.WriteString(w, "hello"); _ = w.Close() }()
	require.NoError(t, c.PutUpload(context.Background(), u, r))
	require.Len(t, stub.puts(), 1)
	assert.Equal(t, "hello", stub.puts()[0].body)
}

// A refused URL (expired, or a header that differs) is not retried: it
// matches ErrExpired, and a fresh reservation is the way on.
func TestPutUploadRefused(t *testing.T) {
	stub, u := newStorage(t, 403)
	c := storageClient(t, newTestClock())
	err := c.PutUpload(context.Background(), u, bytes.NewReader([]byte("hello")))
	require.ErrorIs(t, err, client.ErrExpired)
	assert.Len(t, stub.puts(), 1)

	var resp *http.Response
	_, u = newStorage(t, 200)
	require.NoError(t, c.PutUpload(context.Background(), u, bytes.NewReader([]byte("hello")), client.WithResponseInto(&resp)))
	assert.Equal(t, http.StatusOK, resp.StatusCode, "WithResponseInto sees the storage answer")

	assert.ErrorIs(t, c.PutUpload(context.Background(), nil, strings.NewReader("x")), client.ErrInvalidArgument)
	assert.ErrorIs(t, c.PutUpload(context.Background(), u, nil), client.ErrInvalidArgument)
}

// A middleware may answer a storage request itself, as a cache or a test
// double does, with a response that carries no Request (what
// httptest.ResponseRecorder.Result returns): the refusal is read into a
// StorageError naming the method sent, not a panic.
func TestStorageAnswerWithoutRequest(t *testing.T) {
	srv, c, ctx := setup(t)
	answer := func(code int) client.Middleware {
		return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			if !strings.HasPrefix(req.URL.Path, "/storage/") {
				return next(req)
			}
			rr := httptest.NewRecorder()
			rr.WriteHeader(code)
			_, _ = io.WriteString(rr, `{"error":{"code":"e","message":"answered by the middleware"}}`)
			return rr.Result(), nil
		}
	}

	g := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "a cached heron"})
	var buf bytes.Buffer
	err := c.Download(ctx, g.Output.URL(), &buf, client.WithMiddleware(answer(http.StatusNotFound)))
	var se *client.StorageError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.MethodGet, se.Method)
	assert.ErrorIs(t, err, client.ErrNotFound)
	assert.Equal(t, "answered by the middleware", se.Message)

	u, err := c.CreateUploadURL(ctx, 3, "text/plain")
	require.NoError(t, err)
	err = c.PutUpload(ctx, u, strings.NewReader("abc"), client.WithMiddleware(answer(http.StatusForbidden)))
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.MethodPut, se.Method)
	assert.ErrorIs(t, err, client.ErrExpired)
}

// Once the context ends, a transfer returns ctx.Err() itself: not wrapped,
// and not a *StorageError (the engine guarantees it; the client relies on it).
func TestTransferReturnsTheContextsError(t *testing.T) {
	c := storageClient(t, newTestClock())
	for name, call := range map[string]func(context.Context, string) error{
		"PutUpload": func(ctx context.Context, url string) error {
			u := &mediagen.UploadURL{UploadURL: url, Headers: mediagen.UploadHeaders{ContentType: "text/plain", ContentLength: 5}}
			return c.PutUpload(ctx, u, strings.NewReader("hello"))
		},
		"Download": func(ctx context.Context, url string) error { return c.Download(ctx, url, io.Discard) },
	} {
		ctx, cancel := context.WithCancel(t.Context())
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			cancel() // ends the call after an answer that would be retried
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		assert.Equal(t, context.Canceled, call(ctx, srv.URL+"/storage/f"), name)
		srv.Close()
		cancel()
	}
}
