package upload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
)

// exchange is one request seen by a recorder, with its answer's status.
type exchange struct {
	method, path string
	header       http.Header
	length       int64
	reserved     string // contentType of an upload-url request
	status       int
}

// recorder is a transport that records every request and can fail or
// delay chosen ones.
type recorder struct {
	base http.RoundTripper
	// before, when set, may answer a request itself (non-nil response).
	before func(n int, r *http.Request) *http.Response
	// broken, when set, may fail a request as a dropped connection does.
	broken func(n int, r *http.Request) bool

	mu   sync.Mutex
	seen []exchange
}

func (rec *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	e := exchange{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), length: r.ContentLength}
	if strings.HasSuffix(r.URL.Path, "/files/upload-url") && r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(b))
		var body struct{ ContentType string }
		if err := json.Unmarshal(b, &body); err != nil {
			return nil, err
		}
		e.reserved = body.ContentType
	}
	rec.mu.Lock()
	n := len(rec.seen)
	rec.seen = append(rec.seen, e)
	rec.mu.Unlock()

	if rec.broken != nil && rec.broken(n, r) {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, errors.New("connection reset by peer")
	}
	var resp *http.Response
	if rec.before != nil {
		resp = rec.before(n, r)
	}
	if resp == nil {
		var err error
		if resp, err = rec.base.RoundTrip(r); err != nil {
			return nil, err
		}
	} else if r.Body != nil {
		r.Body.Close()
	}
	rec.mu.Lock()
	rec.seen[n].status = resp.StatusCode
	rec.mu.Unlock()
	return resp, nil
}

// puts returns the storage requests seen so far.
func (rec *recorder) puts() []exchange {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []exchange
	for _, e := range rec.seen {
		if strings.HasPrefix(e.path, "/storage/") {
			out = append(out, e)
		}
	}
	return out
}

// reservations returns the upload-url requests seen so far.
func (rec *recorder) reservations() []exchange {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []exchange
	for _, e := range rec.seen {
		if e.reserved != "" {
			out = append(out, e)
		}
	}
	return out
}

// answer makes a canned storage answer with Retry-After: 0.
func answer(r *http.Request, status int) *http.Response {
	return answerAfter(r, status, "0")
}

// answerAfter makes a canned storage answer with a Retry-After header, or
// none when retryAfter is "".
func answerAfter(r *http.Request, status int, retryAfter string) *http.Response {
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return &http.Response{
		StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader("storage busy")), Request: r,
	}
}

// setup starts a reference server and a client whose requests, storage
// included, go through a recorder; opts are applied to the client last.
func setup(t *testing.T, opts ...client.Option) (*clienttest.Server, *client.Client, *recorder) {
	t.Helper()
	srv := clienttest.NewServer(t)
	rec := &recorder{base: http.DefaultTransport}
	c := srv.Client(append([]client.Option{client.WithHTTPClient(&http.Client{Transport: rec})}, opts...)...)
	return srv, c, rec
}

// assertStoragePut checks a PUT carried exactly the signed headers and no
// credential.
func assertStoragePut(t *testing.T, put exchange, contentType string, size int64) {
	t.Helper()
	assert.Equal(t, http.MethodPut, put.method)
	assert.Empty(t, put.header.Values("Authorization"), "no Authorization to storage")
	for name, values := range put.header {
		for _, v := range values {
			assert.NotContains(t, v, clienttest.APIKey, "header %s carries the API key", name)
		}
	}
	assert.Equal(t, []string{contentType}, put.header.Values("Content-Type"))
	assert.Equal(t, size, put.length)
}

// useAsImage submits an image generation that references id, which the
// service accepts only for a live, decodable image.
func useAsImage(t *testing.T, c *client.Client, id string) {
	t.Helper()
	_, err := c.CreateGeneration(context.Background(), client.ImageGenerationArgs{Prompt: "the same logo, in neon", Image: id})
	require.NoError(t, err, "the uploaded image is live")
}

func TestFileUploadsEveryAcceptedKind(t *testing.T) {
	_, c, rec := setup(t)
	ctx := context.Background()
	dir := t.TempDir()
	for i, s := range samples(t) {
		t.Run(s.name, func(t *testing.T) {
			path := filepath.Join(dir, s.name)
			require.NoError(t, os.WriteFile(path, s.content, 0o600))
			var opts []Option
			if s.declared != "" {
				opts = append(opts, WithContentType(s.declared))
			}
			f, err := File(ctx, c, path, opts...)
			require.NoError(t, err)
			assert.NotEmpty(t, f.ID)
			assert.EqualValues(t, len(s.content), f.Size)
			assert.Empty(t, f.OriginalName, "the signed route records no name")

			res := rec.reservations()
			require.Len(t, res, i+1)
			assert.Equal(t, s.want, res[i].reserved, "reserved with the detected type")
			puts := rec.puts()
			require.Len(t, puts, i+1)
			assertStoragePut(t, puts[i], s.want, int64(len(s.content)))
			assert.Equal(t, http.StatusOK, puts[i].status)
		})
	}
	pngID, err := File(ctx, c, filepath.Join(dir, "logo.png"))
	require.NoError(t, err)
	useAsImage(t, c, pngID.ID)
}

func TestReaderProgressAndTypes(t *testing.T) {
	_, c, rec := setup(t)
	ctx := context.Background()
	content := bytes.Repeat([]byte("a line of the shot list\n"), 20_000) // 480 kB
	var mu sync.Mutex
	var reports []int64
	f, err := Reader(ctx, c, bytes.NewReader(content), int64(len(content)), "", WithProgress(func(sent, total int64) {
		mu.Lock()
		defer mu.Unlock()
		assert.EqualValues(t, len(content), total)
		reports = append(reports, sent)
	}))
	require.NoError(t, err)
	assert.NotEmpty(t, f.ID)
	assert.IsIncreasing(t, reports)
	assert.Greater(t, len(reports), 3, "progress is reported as bytes go out")
	assert.EqualValues(t, len(content), reports[len(reports)-1])
	assertStoragePut(t, rec.puts()[0], "text/plain", int64(len(content)))

	// A one-shot reader: the type is sniffed and the sniffed bytes still sent.
	png := samples(t)[0].content
	f, err = Reader(ctx, c, io.MultiReader(bytes.NewReader(png)), int64(len(png)), "")
	require.NoError(t, err)
	assert.Equal(t, "image/png", rec.reservations()[1].reserved)
	useAsImage(t, c, f.ID)

	// A declared alias is sent in canonical form, as signed.
	wav := samples(t)[4].content
	_, err = Reader(ctx, c, bytes.NewReader(wav), int64(len(wav)), "audio/x-wav")
	require.NoError(t, err)
	assertStoragePut(t, rec.puts()[2], "audio/wav", int64(len(wav)))
}

func TestReaderSizeMismatchStoresNothing(t *testing.T) {
	_, c, rec := setup(t)
	ctx := context.Background()
	_, err := Reader(ctx, c, strings.NewReader("twelve bytes"), 20, "text/plain")
	assert.ErrorIs(t, err, ErrSizeMismatch)
	_, err = Reader(ctx, c, io.MultiReader(strings.NewReader("twelve bytes")), 6, "text/plain")
	assert.ErrorIs(t, err, ErrSizeMismatch, "a one-shot reader longer than declared")
	for _, p := range rec.puts() {
		assert.NotEqual(t, http.StatusOK, p.status, "no short or cut body lands")
	}
}

func TestPutRetriedAfterTransientFailure(t *testing.T) {
	_, c, rec := setup(t)
	failed := false
	rec.before = func(n int, r *http.Request) *http.Response {
		if r.Method == http.MethodPut && !failed {
			failed = true
			return answer(r, http.StatusServiceUnavailable)
		}
		return nil
	}
	png := samples(t)[0].content
	path := filepath.Join(t.TempDir(), "logo.png")
	require.NoError(t, os.WriteFile(path, png, 0o600))

	var sent []int64
	f, err := File(context.Background(), c, path, WithProgress(func(s, _ int64) { sent = append(sent, s) }))
	require.NoError(t, err)
	puts := rec.puts()
	require.Len(t, puts, 2)
	assert.Equal(t, http.StatusServiceUnavailable, puts[0].status)
	assert.Equal(t, http.StatusOK, puts[1].status)
	assertStoragePut(t, puts[1], "image/png", int64(len(png)))
	assert.Len(t, rec.reservations(), 1, "the same URL is retried")
	assert.EqualValues(t, len(png), sent[len(sent)-1])
	useAsImage(t, c, f.ID)
}

func TestPutNotRetriedWhenSourceIsOneShot(t *testing.T) {
	_, c, rec := setup(t)
	rec.before = func(n int, r *http.Request) *http.Response {
		if r.Method == http.MethodPut {
			return answer(r, http.StatusBadGateway)
		}
		return nil
	}
	png := samples(t)[0].content
	_, err := Reader(context.Background(), c, io.MultiReader(bytes.NewReader(png)), int64(len(png)), "image/png")
	var serr *client.StorageError
	require.ErrorAs(t, err, &serr)
	assert.Equal(t, http.StatusBadGateway, serr.StatusCode)
	assert.Equal(t, http.MethodPut, serr.Method)
	assert.True(t, serr.Retryable)
	assert.ErrorContains(t, err, "could not be started again")
	assert.Len(t, rec.puts(), 1)
}

func TestPutGivesUpAfterRepeatedFailures(t *testing.T) {
	_, c, rec := setup(t)
	rec.before = func(n int, r *http.Request) *http.Response {
		if r.Method == http.MethodPut {
			return answer(r, http.StatusServiceUnavailable)
		}
		return nil
	}
	png := samples(t)[0].content
	_, err := Reader(context.Background(), c, bytes.NewReader(png), int64(len(png)), "image/png")
	var serr *client.StorageError
	require.ErrorAs(t, err, &serr)
	assert.Equal(t, http.StatusServiceUnavailable, serr.StatusCode)
	assert.Len(t, rec.puts(), c.RetryPolicy().MaxRetries+1, "the first PUT and MaxRetries more")
	assert.Len(t, rec.reservations(), 1, "transient failures retry the same URL")
}

func TestPutRetryHonoursContext(t *testing.T) {
	_, c, rec := setup(t, client.WithRetryWait(time.Millisecond, time.Minute)) // a 30 s Retry-After is waited for
	ctx, cancel := context.WithCancel(context.Background())
	rec.before = func(n int, r *http.Request) *http.Response {
		if r.Method == http.MethodPut {
			resp := answer(r, http.StatusServiceUnavailable)
			resp.Header.Set("Retry-After", "30")
			cancel()
			return resp
		}
		return nil
	}
	png := samples(t)[0].content
	start := time.Now()
	_, err := Reader(ctx, c, bytes.NewReader(png), int64(len(png)), "image/png")
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 5*time.Second, "the 30 s Retry-After wait ends with the context")
}

func TestExpiredURLGetsFreshReservation(t *testing.T) {
	srv, c, rec := setup(t)
	expired := false
	rec.before = func(n int, r *http.Request) *http.Response {
		if r.Method == http.MethodPut && !expired {
			expired = true
			srv.Advance(16 * time.Minute) // past the URL's 15 minutes
		}
		return nil
	}
	png := samples(t)[0].content
	f, err := Reader(context.Background(), c, bytes.NewReader(png), int64(len(png)), "")
	require.NoError(t, err)
	puts := rec.puts()
	require.Len(t, puts, 2)
	assert.Equal(t, http.StatusForbidden, puts[0].status, "storage refuses the expired URL")
	assert.Equal(t, http.StatusOK, puts[1].status)
	assert.NotEqual(t, puts[0].path, puts[1].path, "a fresh reservation, a fresh URL")
	assert.Len(t, rec.reservations(), 2)
	useAsImage(t, c, f.ID)

	// A one-shot source cannot be sent again: the refusal is reported.
	expired = false
	_, err = Reader(context.Background(), c, io.MultiReader(bytes.NewReader(png)), int64(len(png)), "image/png")
	var serr *client.StorageError
	require.ErrorAs(t, err, &serr)
	assert.Equal(t, http.StatusForbidden, serr.StatusCode)
	assert.ErrorContains(t, err, "signed URL refused")
}

func TestExpiredURLSaysSo(t *testing.T) {
	// The expired reservation is gone from storage by the time its PUT
	// arrives; the refusal still says why, as the contract's "after expiry
	// start again at step 1" needs.
	srv, c, rec := setup(t)
	rec.before = func(n int, r *http.Request) *http.Response {
		if r.Method == http.MethodPut {
			srv.Advance(16 * time.Minute)
		}
		return nil
	}
	png := samples(t)[0].content
	_, err := Reader(context.Background(), c, io.MultiReader(bytes.NewReader(png)), int64(len(png)), "image/png")
	require.ErrorIs(t, err, client.ErrExpired)
	assert.ErrorContains(t, err, "expired")
	assert.NotContains(t, err.Error(), "signature does not match")
}

func TestUploadFromAPipe(t *testing.T) {
	// os.Stdin piped, os.Pipe, a FIFO: an *os.File that cannot seek is
	// read once, as any other io.Reader.
	_, c, rec := setup(t)
	png := samples(t)[0].content
	pipe := func() *os.File {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		go func() { _, _ = w.Write(png); _ = w.Close() }()
		return r
	}
	f, err := Reader(context.Background(), c, pipe(), int64(len(png)), "")
	require.NoError(t, err)
	assert.NotEmpty(t, f.ID)
	assert.Equal(t, "image/png", rec.reservations()[0].reserved, "detected from the piped bytes")
	useAsImage(t, c, f.ID)

	files, err := Multipart(context.Background(), c, []Part{{Name: "logo.png", Reader: pipe(), Size: int64(len(png))}})
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.EqualValues(t, len(png), files[0].Size)
}

func TestMultipartEveryAcceptedKind(t *testing.T) {
	_, c, rec := setup(t)
	all := samples(t)
	for start := 0; start < len(all); start += MaxParts {
		batch := all[start:min(start+MaxParts, len(all))]
		parts := make([]Part, len(batch))
		for i, s := range batch {
			parts[i] = Part{Name: s.name, Reader: bytes.NewReader(s.content), Size: int64(len(s.content)), ContentType: s.declared}
		}
		files, err := Multipart(context.Background(), c, parts)
		require.NoError(t, err)
		require.Len(t, files, len(batch))
		for i, f := range files {
			assert.NotEmpty(t, f.ID)
			assert.Equal(t, batch[i].name, f.OriginalName, "ids in submission order")
			assert.EqualValues(t, len(batch[i].content), f.Size)
		}
	}
	assert.Empty(t, rec.puts(), "multipart goes to the API, not storage")
}

func TestMultipartTenFilesFromDisk(t *testing.T) {
	_, c, _ := setup(t)
	dir := t.TempDir()
	parts := make([]Part, MaxParts)
	for i := range parts {
		path := filepath.Join(dir, "frame-"+string(rune('a'+i))+".png")
		require.NoError(t, os.WriteFile(path, samples(t)[0].content, 0o600))
		p, err := FilePart(path)
		require.NoError(t, err)
		parts[i] = p
	}
	files, err := Multipart(context.Background(), c, parts)
	require.NoError(t, err)
	require.Len(t, files, MaxParts)
	for i, f := range files {
		assert.Equal(t, parts[i].Name, f.OriginalName)
	}
	useAsImage(t, c, files[9].ID)

	// The same parts can be sent again: FilePart reopens its file.
	again, err := Multipart(context.Background(), c, parts)
	require.NoError(t, err)
	assert.Len(t, again, MaxParts)
	assert.NotEqual(t, files[0].ID, again[0].ID)
}

func TestMultipartSourceFailureIsReported(t *testing.T) {
	_, c, _ := setup(t)
	boom := errors.New("disk went away")
	parts := []Part{
		{Name: "a.txt", Reader: strings.NewReader("fine"), Size: 4, ContentType: "text/plain"},
		{Name: "b.txt", Reader: io.MultiReader(strings.NewReader("half"), errReader{boom}), Size: 8, ContentType: "text/plain"},
	}
	_, err := Multipart(context.Background(), c, parts)
	assert.ErrorIs(t, err, boom)
}

// errReader fails every read.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestStorageNeverSeesTheKey(t *testing.T) {
	// Storage itself, not a recorder: the reference server answers 403 to
	// any Authorization header, so a 200 proves none was sent.
	srv := clienttest.NewServer(t)
	var authSeen bool
	var mu sync.Mutex
	target, err := url.Parse(srv.URL())
	require.NoError(t, err)
	forward := httputil.NewSingleHostReverseProxy(target) // keeps the proxy's Host, so URLs are signed for it
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/storage/") {
			mu.Lock()
			authSeen = authSeen || r.Header.Get("Authorization") != ""
			mu.Unlock()
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	c := srv.Client(client.WithBaseURL(proxy.URL), client.WithHTTPClient(proxy.Client()))
	png := samples(t)[0].content
	_, err = Reader(context.Background(), c, bytes.NewReader(png), int64(len(png)), "")
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.False(t, authSeen)
}

func TestProgressNeverGoesBackOnRetry(t *testing.T) {
	_, c, rec := setup(t)
	content := bytes.Repeat([]byte("a line of the shot list\n"), 20_000) // 480 kB
	failed := false
	rec.before = func(n int, r *http.Request) *http.Response {
		if r.Method == http.MethodPut && !failed {
			failed = true
			_, _ = io.CopyN(io.Discard, r.Body, int64(len(content)/2)) // storage drops the connection halfway
			return answer(r, http.StatusServiceUnavailable)
		}
		return nil
	}
	var reports []int64
	f, err := Reader(context.Background(), c, bytes.NewReader(content), int64(len(content)), "text/plain", WithProgress(func(sent, total int64) {
		assert.EqualValues(t, len(content), total)
		reports = append(reports, sent)
	}))
	require.NoError(t, err)
	assert.NotEmpty(t, f.ID)
	require.Len(t, rec.puts(), 2)
	assert.IsIncreasing(t, reports, "sent never goes back, even when the PUT starts again")
	assert.EqualValues(t, len(content), reports[len(reports)-1])
}

func TestFileErrorsNameTheFile(t *testing.T) {
	_, c, rec := setup(t)
	rec.before = func(n int, r *http.Request) *http.Response {
		if r.Method == http.MethodPut {
			return answer(r, http.StatusInternalServerError)
		}
		return nil
	}
	path := filepath.Join(t.TempDir(), "logo.png")
	require.NoError(t, os.WriteFile(path, samples(t)[0].content, 0o600))
	_, err := File(context.Background(), c, path)
	var serr *client.StorageError
	require.ErrorAs(t, err, &serr)
	assert.Equal(t, http.StatusInternalServerError, serr.StatusCode)
	assert.ErrorContains(t, err, path)
}

// TestMultipartIsATransfer: a multipart upload carries files, so the API's
// short per-attempt timeout does not cut it; the transfer timeout does.
func TestMultipartIsATransfer(t *testing.T) {
	slow := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if strings.HasSuffix(req.URL.Path, "/files/upload") {
			select {
			case <-time.After(300 * time.Millisecond):
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		return next(req)
	}
	_, c, _ := setup(t, client.WithMiddleware(slow), client.WithTimeout(50*time.Millisecond))
	png := samples(t)[0]
	files, err := Multipart(context.Background(), c, []Part{{Name: png.name, Reader: bytes.NewReader(png.content), Size: int64(len(png.content)), ContentType: png.declared}})
	require.NoError(t, err, "a 300 ms upload outlives a 50 ms API timeout")
	require.Len(t, files, 1)

	_, err = Multipart(context.Background(), c, []Part{{Name: png.name, Reader: bytes.NewReader(png.content), Size: int64(len(png.content)), ContentType: png.declared}},
		WithClientOptions(client.WithTransferTimeout(50*time.Millisecond)))
	var netErr net.Error
	require.ErrorAs(t, err, &netErr, "the transfer timeout bounds it")
	assert.True(t, netErr.Timeout())
}

// TestMultipartOptions: progress counts the parts' bytes together and ends
// at their total; client options apply to the request; WithContentType is
// refused before anything is sent.
func TestMultipartOptions(t *testing.T) {
	_, c, rec := setup(t)
	all := samples(t)[:3]
	parts := func() []Part {
		out := make([]Part, len(all))
		for i, s := range all {
			out[i] = Part{Name: s.name, Reader: bytes.NewReader(s.content), Size: int64(len(s.content)), ContentType: s.declared}
		}
		return out
	}
	var total int64
	for _, s := range all {
		total += int64(len(s.content))
	}
	var seen [][2]int64
	files, err := Multipart(context.Background(), c, parts(),
		WithProgress(func(sent, total int64) { seen = append(seen, [2]int64{sent, total}) }),
		WithClientOptions(client.WithHeader("X-Batch", "logos")))
	require.NoError(t, err)
	require.Len(t, files, len(all))
	require.NotEmpty(t, seen)
	for i, s := range seen {
		assert.Equal(t, total, s[1])
		if i > 0 {
			assert.Greater(t, s[0], seen[i-1][0], "sent only grows")
		}
	}
	assert.Equal(t, total, seen[len(seen)-1][0], "the last call reports the total")
	seenRequests := func() []exchange {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return slices.Clone(rec.seen)
	}
	var headers []string
	for _, e := range seenRequests() {
		if e.path == "/v3/files/upload" {
			headers = append(headers, e.header.Get("X-Batch"))
		}
	}
	assert.Equal(t, []string{"logos"}, headers, "one request, with the call's header")

	before := len(seenRequests())
	_, err = Multipart(context.Background(), c, parts(), WithContentType("image/png"))
	require.ErrorContains(t, err, "WithContentType")
	assert.Len(t, seenRequests(), before, "nothing was sent")
}

// An old QuickTime movie may open with its moov atom instead of ftyp; that
// atom is usually longer than the 512 bytes detection reads, and the
// service, which sees the whole file, accepts it as video/quicktime.
func TestQuickTimeWithLongFirstAtomIsDetected(t *testing.T) {
	_, c, rec := setup(t)
	mov := make([]byte, 2048)
	copy(mov, "\x00\x00\x04\x00moov") // a moov of 1,024 bytes
	copy(mov[1024:], "\x00\x00\x04\x00mdat")
	path := filepath.Join(t.TempDir(), "old.mov")
	require.NoError(t, os.WriteFile(path, mov, 0o600))

	_, err := File(context.Background(), c, path)
	require.NoError(t, err)
	assert.Equal(t, "video/quicktime", rec.reservations()[0].reserved)

	_, err = Reader(context.Background(), c, io.MultiReader(bytes.NewReader(mov)), int64(len(mov)), "")
	require.NoError(t, err)

	part, err := FilePart(path)
	require.NoError(t, err)
	assert.Equal(t, "video/quicktime", part.ContentType)
	files, err := Multipart(context.Background(), c, []Part{part, {Name: "b.mov", Reader: bytes.NewReader(mov), Size: int64(len(mov))}})
	require.NoError(t, err)
	assert.Len(t, files, 2)
}
