package upload

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/testlog"
)

// sleepRecorder is a clock whose Sleep returns at once and records the
// wait, so that backoffs of seconds cost no wall time.
type sleepRecorder struct {
	mu     sync.Mutex
	sleeps []time.Duration
}

func (s *sleepRecorder) Now() time.Time { return time.Now() }

func (s *sleepRecorder) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.sleeps = append(s.sleeps, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.sleeps...)
}

// withClock makes a client, and uploads acting for it, sleep on clk.
func withClock(clk client.Clock) client.Option { return client.WithClock(clk) }

// failPuts makes storage answer status to the first n PUTs (all when n < 0),
// with the Retry-After given ("" for none).
func failPuts(rec *recorder, n int, status int, retryAfter string) {
	var failed atomic.Int64
	rec.before = func(_ int, r *http.Request) *http.Response {
		if r.Method == http.MethodPut && (n < 0 || failed.Add(1) <= int64(n)) {
			return answerAfter(r, status, retryAfter)
		}
		return nil
	}
}

// Storage PUTs are retried under the client's retry policy, MaxRetries+1
// attempts in all, and the policy can be set per client or per upload.
func TestPutAttemptsFollowTheRetryPolicy(t *testing.T) {
	tests := []struct {
		name       string
		clientOpts []client.Option
		uploadOpts []Option
		puts       int
	}{
		{"default policy", nil, nil, client.DefaultRetryPolicy().MaxRetries + 1},
		{"client MaxRetries", []client.Option{client.WithMaxRetries(2)}, nil, 3},
		{"client retries disabled", []client.Option{client.WithMaxRetries(0)}, nil, 1},
		{"per-upload retries disabled", nil, []Option{WithClientOptions(client.WithMaxRetries(0))}, 1},
		{"per-upload policy over the client's", []client.Option{client.WithMaxRetries(0)},
			[]Option{WithClientOptions(client.WithRetryPolicy(client.RetryPolicy{MaxRetries: 1, WaitMin: time.Millisecond, WaitMax: time.Millisecond}))}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c, rec := setup(t, tt.clientOpts...)
			failPuts(rec, -1, http.StatusServiceUnavailable, "")
			png := samples(t)[0].content
			f, err := Reader(context.Background(), c, bytes.NewReader(png), int64(len(png)), "image/png", tt.uploadOpts...)
			assert.Nil(t, f)
			var serr *client.StorageError
			require.ErrorAs(t, err, &serr)
			assert.Equal(t, http.MethodPut, serr.Method)
			assert.Equal(t, http.StatusServiceUnavailable, serr.StatusCode)
			assert.Equal(t, "storage busy", serr.Message)
			assert.Len(t, rec.puts(), tt.puts)
			assert.Len(t, rec.reservations(), 1, "transient failures retry the same URL")
		})
	}
}

// One transient failure: the default policy retries it, a per-upload
// WithMaxRetries(0) does not, and the client's own policy is untouched.
func TestPutRetryPerUpload(t *testing.T) {
	_, c, rec := setup(t)
	png := samples(t)[0].content
	ctx := context.Background()

	failPuts(rec, 1, http.StatusServiceUnavailable, "")
	_, err := Reader(ctx, c, bytes.NewReader(png), int64(len(png)), "", WithClientOptions(client.WithMaxRetries(0)))
	var serr *client.StorageError
	require.ErrorAs(t, err, &serr)
	assert.Equal(t, http.StatusServiceUnavailable, serr.StatusCode)
	assert.Len(t, rec.puts(), 1, "not retried")

	failPuts(rec, 1, http.StatusServiceUnavailable, "")
	f, err := Reader(ctx, c, bytes.NewReader(png), int64(len(png)), "")
	require.NoError(t, err)
	assert.NotEmpty(t, f.ID)
	puts := rec.puts()
	require.Len(t, puts, 3, "the default policy retried")
	assert.Equal(t, http.StatusServiceUnavailable, puts[1].status)
	assert.Equal(t, http.StatusOK, puts[2].status)
	useAsImage(t, c, f.ID)
}

// The waits between PUTs are the client's backoff, WaitMin doubling up to
// WaitMax with jitter, or longer when storage asks with Retry-After.
func TestPutBackoffFollowsTheRetryPolicy(t *testing.T) {
	const lo, hi = 100 * time.Millisecond, 400 * time.Millisecond
	png := samples(t)[0].content

	t.Run("backoff", func(t *testing.T) {
		clk := &sleepRecorder{}
		_, c, rec := setup(t, client.WithRetryWait(lo, hi), withClock(clk))
		failPuts(rec, -1, http.StatusServiceUnavailable, "")
		_, err := Reader(context.Background(), c, bytes.NewReader(png), int64(len(png)), "image/png")
		require.Error(t, err)
		waits := clk.waits()
		require.Len(t, waits, c.RetryPolicy().MaxRetries, "a wait before each retry")
		for i, w := range waits {
			step := min(lo<<i, hi)
			assert.GreaterOrEqual(t, w, step/2, "retry %d", i+1)
			assert.LessOrEqual(t, w, step, "retry %d", i+1)
		}
	})
	t.Run("Retry-After within WaitMax", func(t *testing.T) {
		clk := &sleepRecorder{}
		_, c, rec := setup(t, client.WithRetryWait(lo, 5*time.Second), withClock(clk))
		failPuts(rec, 2, http.StatusTooManyRequests, "2")
		f, err := Reader(context.Background(), c, bytes.NewReader(png), int64(len(png)), "image/png")
		require.NoError(t, err)
		assert.NotEmpty(t, f.ID)
		assert.Equal(t, []time.Duration{2 * time.Second, 2 * time.Second}, clk.waits(), "what storage asked for")
	})
	t.Run("Retry-After beyond WaitMax", func(t *testing.T) {
		// As for API requests: a longer wait than the policy allows ends
		// the retries, so the caller sees it instead of a long sleep.
		clk := &sleepRecorder{}
		_, c, rec := setup(t, client.WithRetryWait(lo, hi), withClock(clk))
		failPuts(rec, -1, http.StatusServiceUnavailable, "3600")
		_, err := Reader(context.Background(), c, bytes.NewReader(png), int64(len(png)), "image/png")
		var serr *client.StorageError
		require.ErrorAs(t, err, &serr)
		assert.Equal(t, http.StatusServiceUnavailable, serr.StatusCode)
		assert.ErrorContains(t, err, "1h0m0s")
		assert.Len(t, rec.puts(), 1)
		assert.Empty(t, clk.waits())
	})
}

// retryLines returns the storage retry lines of a log.
func retryLines(log string) []string {
	var out []string
	for line := range strings.Lines(log) {
		if strings.Contains(line, "storage PUT failed; retrying") {
			out = append(out, line)
		}
	}
	return out
}

// A retried PUT is logged through the client's logger, or the upload's when
// the call gives one, and the line never carries the signed URL.
func TestPutRetryIsLogged(t *testing.T) {
	png := samples(t)[0].content
	ctx := context.Background()
	clientLog, clientBuf := testlog.DebugLogger()
	_, c, rec := setup(t, client.WithLogger(clientLog))

	failPuts(rec, 1, http.StatusServiceUnavailable, "")
	_, err := Reader(ctx, c, bytes.NewReader(png), int64(len(png)), "")
	require.NoError(t, err)
	lines := retryLines(clientBuf.String())
	require.Len(t, lines, 1, clientBuf.String())
	assert.Contains(t, lines[0], `"level":"DEBUG"`)
	assert.Contains(t, lines[0], `"attempt":2`)
	assert.Contains(t, lines[0], "503")

	uploadLog, uploadBuf := testlog.DebugLogger()
	failPuts(rec, 1, http.StatusBadGateway, "")
	_, err = Reader(ctx, c, bytes.NewReader(png), int64(len(png)), "", WithClientOptions(client.WithLogger(uploadLog)))
	require.NoError(t, err)
	assert.Len(t, retryLines(uploadBuf.String()), 1, "the upload's logger")
	assert.Len(t, retryLines(clientBuf.String()), 1, "not the client's")

	// A dropped connection: the transport's error names the URL, whose
	// query is the upload's credential.
	rec.before = nil
	var broken atomic.Bool
	rec.broken = func(_ int, r *http.Request) bool { return r.Method == http.MethodPut && !broken.Swap(true) }
	_, err = Reader(ctx, c, bytes.NewReader(png), int64(len(png)), "")
	require.NoError(t, err)
	lines = retryLines(clientBuf.String())
	require.Len(t, lines, 2)
	assert.Contains(t, lines[1], "connection reset by peer")
	assert.NotContains(t, clientBuf.String(), "signature=", "no signed URL in the log")

	broken.Store(false)
	_, err = Reader(ctx, c, bytes.NewReader(png), int64(len(png)), "", WithClientOptions(client.WithMaxRetries(0)))
	require.ErrorContains(t, err, "connection reset by peer")
	assert.NotContains(t, err.Error(), "signature=", "no signed URL in the error")
}

// Client options carried by WithClientOptions apply to one upload's
// requests only: the reservation and the PUT go through its middleware; its
// headers go to the API, never to storage, whose requests carry exactly the
// signed headers. Several carriers add up.
func TestClientOptionsApplyToOneUpload(t *testing.T) {
	_, c, rec := setup(t)
	png := samples(t)[0].content
	ctx := context.Background()
	var paths []string
	var mu sync.Mutex
	mw := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		mu.Lock()
		paths = append(paths, req.Method+" "+req.URL.Path)
		mu.Unlock()
		return next(req)
	}
	opts := []Option{WithClientOptions(client.WithHeader("X-Batch", "nightly-7")), WithClientOptions(client.WithMiddleware(mw))}
	f, err := Reader(ctx, c, bytes.NewReader(png), int64(len(png)), "", opts...)
	require.NoError(t, err)
	useAsImage(t, c, f.ID)

	require.Len(t, paths, 2)
	assert.Equal(t, "POST /v3/files/upload-url", paths[0])
	assert.True(t, strings.HasPrefix(paths[1], "PUT /storage/"), paths[1])
	res := rec.reservations()
	require.Len(t, res, 1)
	assert.Equal(t, []string{"nightly-7"}, res[0].header.Values("X-Batch"))
	puts := rec.puts()
	require.Len(t, puts, 1)
	assert.Empty(t, puts[0].header.Values("X-Batch"), "storage gets the signed headers only")
	assertStoragePut(t, puts[0], "image/png", int64(len(png)))

	// The next upload, without the option, has neither.
	_, err = Reader(ctx, c, bytes.NewReader(png), int64(len(png)), "")
	require.NoError(t, err)
	assert.Len(t, paths, 2)
	assert.Empty(t, rec.reservations()[1].header.Values("X-Batch"))
}

// A client option that cannot apply to one call, carried by
// WithClientOptions, fails the upload before anything is read or sent, as
// a bad upload option does; every bad option is named.
func TestInvalidClientOptionFailsTheUpload(t *testing.T) {
	ctx := context.Background()
	unread := func(t *testing.T) io.Reader {
		return readerFunc(func([]byte) (int, error) {
			t.Error("the source was read")
			return 0, io.EOF
		})
	}
	_, err := Reader(ctx, silentClient(t), unread(t), int64(len(headPNG)), "",
		WithClientOptions(client.WithBaseURL("https://elsewhere.example")))
	assert.ErrorContains(t, err, "upload.WithClientOptions")
	assert.ErrorContains(t, err, "WithBaseURL")
	_, err = Reader(ctx, silentClient(t), unread(t), int64(len(headPNG)), "",
		WithClientOptions(client.WithTimeout(-1)))
	assert.ErrorContains(t, err, "WithTimeout")
	_, err = File(ctx, silentClient(t), writeFile(t, "logo.png", headPNG), WithClientOptions(client.WithMaxRetries(-1)))
	assert.ErrorContains(t, err, "WithMaxRetries")
	_, err = Multipart(ctx, silentClient(t), []Part{{Name: "logo.png", Reader: unread(t), Size: int64(len(headPNG)), ContentType: "image/png"}},
		WithClientOptions(client.WithTimeout(-1)))
	assert.ErrorContains(t, err, "WithTimeout")

	_, err = File(ctx, silentClient(t), writeFile(t, "logo.png", headPNG), nil, WithProgress(nil), WithContentType("image/none"),
		WithClientOptions(client.WithTimeout(-1)))
	for _, name := range []string{"upload.WithProgress", "upload.WithContentType", "upload.WithClientOptions", "WithTimeout"} {
		assert.ErrorContains(t, err, name)
	}
}

// readerFunc is an io.Reader made of a function.
type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
