package upload

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
)

func TestMultipartRefusesBeforeSending(t *testing.T) {
	ctx := context.Background()
	png := func() Part { return Part{Name: "a.png", Reader: strings.NewReader(headPNG), Size: int64(len(headPNG))} }
	eleven := make([]Part, MaxParts+1)
	for i := range eleven {
		eleven[i] = png()
	}
	tests := []struct {
		name  string
		parts []Part
		want  error
	}{
		{"no parts", nil, ErrNoParts},
		{"eleven parts", eleven, ErrTooManyParts},
		{"empty part", []Part{png(), {Name: "e.png", Reader: strings.NewReader(""), Size: 0}}, ErrEmpty},
		{"part over 30 MB", []Part{{Name: "big.png", Reader: strings.NewReader(headPNG), Size: MaxFileSize + 1}}, ErrTooLarge},
		{"refused declared type", []Part{{Name: "a.heic", Reader: strings.NewReader(headPNG), Size: int64(len(headPNG)), ContentType: "image/heic"}}, ErrUnsupportedType},
		{"refused detected type", []Part{png(), {Name: "p.html", Reader: strings.NewReader(headHTML), Size: int64(len(headHTML))}}, ErrUnsupportedType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := Multipart(ctx, silentClient(t), tt.parts)
			assert.Nil(t, files)
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

// receivedPart is one part as the test handler parsed it.
type receivedPart struct {
	form, filename, contentType string
	body                        []byte
}

// multipartSink serves one multipart request and reports its parts.
func multipartSink(t *testing.T) (*httptest.Server, <-chan []receivedPart) {
	t.Helper()
	got := make(chan []receivedPart, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mr, err := r.MultipartReader()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			got <- nil
			return
		}
		var parts []receivedPart
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				got <- nil
				return
			}
			body, err := io.ReadAll(p)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				got <- nil
				return
			}
			parts = append(parts, receivedPart{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), body})
		}
		got <- parts
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// postParts streams prepared parts through a pipe to url, as Multipart does.
func postParts(t *testing.T, url string, parts []Part) (*http.Response, error, error) {
	t.Helper()
	prepared, err := prepareParts(parts)
	require.NoError(t, err)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	werr := make(chan error, 1)
	go func() {
		err := writeParts(mw, prepared, &progress{})
		pw.CloseWithError(err)
		werr <- err
	}()
	resp, err := http.Post(url, mw.FormDataContentType(), pr)
	pr.Close()
	if resp != nil {
		resp.Body.Close()
	}
	return resp, err, <-werr
}

func TestWritePartsStreamsEveryPart(t *testing.T) {
	srv, got := multipartSink(t)
	large := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB of text
	path := writeFile(t, "notes.md", "# Notes\n\nA logo reveal.\n")
	fp, err := FilePart(path)
	require.NoError(t, err)
	parts := []Part{
		{Name: `logo "v2".png`, Reader: strings.NewReader(headPNG), Size: int64(len(headPNG))},
		{Name: "voix-café.flac", Reader: bytes.NewReader([]byte(headFLAC)), Size: int64(len(headFLAC)), ContentType: "audio/x-flac"},
		{Reader: io.MultiReader(bytes.NewReader(large)), Size: int64(len(large))},
		fp,
	}
	resp, postErr, writeErr := postParts(t, srv.URL, parts)
	require.NoError(t, postErr)
	require.NoError(t, writeErr)
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	received := <-got
	require.Len(t, received, 4)
	want := []receivedPart{
		{"files", `logo "v2".png`, "image/png", []byte(headPNG)},
		{"files", "voix-café.flac", "audio/flac", []byte(headFLAC)},
		{"files", "file-3", "text/plain", large},
		{"files", "notes.md", "text/markdown", []byte("# Notes\n\nA logo reveal.\n")},
	}
	for i := range want {
		assert.Equal(t, want[i].form, received[i].form, i)
		assert.Equal(t, want[i].filename, received[i].filename, i)
		assert.Equal(t, want[i].contentType, received[i].contentType, i)
		assert.True(t, bytes.Equal(want[i].body, received[i].body), "part %d body", i)
	}
	assert.Nil(t, fp.Reader.(*lazyFile).f, "the file part was closed after streaming")
}

func TestWritePartsAbortsOnShortSource(t *testing.T) {
	srv, got := multipartSink(t)
	parts := []Part{{Name: "short.txt", Reader: strings.NewReader("only ten b"), Size: 20, ContentType: "text/plain"}}
	_, _, writeErr := postParts(t, srv.URL, parts)
	assert.ErrorIs(t, writeErr, ErrSizeMismatch)
	assert.Nil(t, <-got, "the server never sees a complete form")
}

func TestFilePart(t *testing.T) {
	path := writeFile(t, "voice.flac", headFLAC+"rest of the stream")
	p, err := FilePart(path)
	require.NoError(t, err)
	assert.Equal(t, "voice.flac", p.Name)
	assert.Equal(t, "audio/flac", p.ContentType)
	assert.EqualValues(t, len(headFLAC)+len("rest of the stream"), p.Size)

	lf := p.Reader.(*lazyFile)
	assert.Nil(t, lf.f, "nothing is open before the part is read")
	b, err := io.ReadAll(p.Reader)
	require.NoError(t, err)
	assert.Equal(t, headFLAC+"rest of the stream", string(b))
	assert.Nil(t, lf.f, "closed at the end of the file")
	lf.release()
	again, err := io.ReadAll(p.Reader)
	require.NoError(t, err)
	assert.Equal(t, b, again, "released parts read from the start again")

	_, err = FilePart(t.TempDir())
	assert.ErrorContains(t, err, "not a regular file")
	_, err = FilePart(path + ".missing")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// earlyAnswer is a client whose API answers every request status at once,
// without reading its body, as a proxy or an auth check in front of the
// service does. It returns the client's transport too.
func earlyAnswer(t *testing.T, status int) (*client.Client, *http.Transport) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"error":{"code":"unauthorized","message":"bad key"}}`)
	}))
	t.Cleanup(srv.Close)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	c, err := client.New("test-key", client.WithBaseURL(srv.URL), client.WithMaxRetries(0), client.WithHTTPClient(&http.Client{Transport: tr}))
	require.NoError(t, err)
	return c, tr
}

func TestMultipartEarlyAnswerIsReportedAndLeaksNothing(t *testing.T) {
	c, tr := earlyAnswer(t, http.StatusUnauthorized)
	big := func() Part {
		return Part{Name: "big.txt", Reader: io.LimitReader(zeros{}, 20<<20), Size: 20 << 20, ContentType: "text/plain"}
	}
	before := runtime.NumGoroutine()
	for range 5 {
		_, err := Multipart(context.Background(), c, []Part{big(), big()})
		require.Error(t, err)
		assert.ErrorIs(t, err, client.ErrUnauthorized, "the service's answer, not the broken pipe: %v", err)
		assert.NotErrorIs(t, err, io.ErrClosedPipe)
	}
	tr.CloseIdleConnections()
	assert.Eventually(t, func() bool { return runtime.NumGoroutine() <= before+2 }, 5*time.Second, 10*time.Millisecond,
		"goroutines before %d, after %d", before, runtime.NumGoroutine())
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestMultipartSourceFailureNamesThePart(t *testing.T) {
	boom := errors.New("disk went away")
	var sb strings.Builder
	mw := multipart.NewWriter(&sb)
	src := newSource(errReader{boom}, 8)
	err := writeParts(mw, []preparedPart{{name: "b.txt", contentType: "text/plain", src: src}}, &progress{})
	assert.ErrorIs(t, err, boom)
	assert.ErrorContains(t, err, "part 1 (b.txt)")
}
