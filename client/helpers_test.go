package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// setup starts a reference server (clienttest.NewServer, with opts) and a
// client of its default project, whose waits move the server's clock.
func setup(t *testing.T, opts ...clienttest.Option) (*clienttest.Server, *client.Client, context.Context) {
	t.Helper()
	srv := clienttest.NewServer(t, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return srv, srv.Client(), ctx
}

// loopback returns a transport of the test's own for requests to a server
// on loopback, its idle connections closed when the test ends.
func loopback(t testing.TB) http.RoundTripper {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// part is one file of a multipart upload.
type part struct {
	name, contentType string
	data              []byte
}

// multipartBody builds the body of POST /v3/files/upload.
func multipartBody(t testing.TB, parts ...part) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="files"; filename="`+p.name+`"`)
		h.Set("Content-Type", p.contentType)
		pw, err := w.CreatePart(h)
		require.NoError(t, err)
		_, err = pw.Write(p.data)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return w.FormDataContentType(), &buf
}

// uploadPNG uploads a small PNG and returns its file id.
func uploadPNG(t testing.TB, ctx context.Context, c *client.Client) string {
	t.Helper()
	ct, body := multipartBody(t, part{"logo.png", "image/png", media.PNG(64, 48, t.Name())})
	files, err := c.UploadMultipart(ctx, ct, body)
	require.NoError(t, err)
	require.Len(t, files, 1)
	return files[0].ID
}

// uploadWAV uploads a speech sample of d and returns its file id.
func uploadWAV(t testing.TB, ctx context.Context, c *client.Client, d time.Duration) string {
	t.Helper()
	ct, body := multipartBody(t, part{"sample.wav", "audio/wav", media.WAV(d, t.Name())})
	files, err := c.UploadMultipart(ctx, ct, body)
	require.NoError(t, err)
	require.Len(t, files, 1)
	return files[0].ID
}

// catalogVoice returns the id of a catalog voice.
func catalogVoice(t testing.TB, ctx context.Context, c *client.Client) *mediagen.Voice {
	t.Helper()
	voices, err := c.Voices(ctx, client.VoiceFilter{Owner: mediagen.VoiceOwnerService})
	require.NoError(t, err)
	require.NotEmpty(t, voices)
	return voices[0]
}

// asArgs turns a feature and arguments, as tables of cases write them, into
// Args: typed arguments of that very spelling pass through; anything else
// becomes RawArgs with the feature as spelled.
func asArgs(t testing.TB, feature mediagen.Feature, args any) client.Args {
	t.Helper()
	a, err := toArgs(feature, args)
	require.NoError(t, err)
	return a
}

func toArgs(feature mediagen.Feature, args any) (client.Args, error) {
	if a, ok := args.(client.Args); ok {
		if v := reflect.ValueOf(a); v.Kind() == reflect.Pointer && v.IsNil() {
			return a, nil // as given: CreateGeneration and Estimate refuse it
		}
		if a.Feature() == feature {
			return a, nil
		}
	}
	m := map[string]any{}
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
	}
	return client.RawArgs{FeatureName: feature, Values: m}, nil
}

// sentRequest is what a transport sent of one request.
type sentRequest struct {
	Method, Path string
	Header       http.Header
}

// recorder is a transport that records every request it is given. Through
// answer it can stand in for what lies beyond: answer gets the request and
// how many of the same method and path came before it, and returns the
// outcome, or nil and nil to send the request on to next.
type recorder struct {
	next   http.RoundTripper
	answer func(r *http.Request, n int) (*http.Response, error)

	mu   sync.Mutex
	sent []sentRequest
	seen map[string]int
}

func (rec *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	rec.mu.Lock()
	if rec.seen == nil {
		rec.seen = map[string]int{}
	}
	key := r.Method + " " + r.URL.Path
	n := rec.seen[key]
	rec.seen[key]++
	rec.sent = append(rec.sent, sentRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()})
	rec.mu.Unlock()
	if rec.answer != nil {
		if resp, err := rec.answer(r, n); resp != nil || err != nil {
			return resp, err
		}
	}
	return rec.next.RoundTrip(r)
}

// requests returns the requests sent so far whose path starts with prefix.
func (rec *recorder) requests(prefix string) []sentRequest {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []sentRequest
	for _, s := range rec.sent {
		if strings.HasPrefix(s.Path, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// count returns how many requests of method and path were sent.
func (rec *recorder) count(method, path string) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.seen[method+" "+path]
}

// recorded returns a client of srv's default project whose requests go
// through a recorder, and the recorder.
func recorded(t testing.TB, srv *clienttest.Server, answer func(r *http.Request, n int) (*http.Response, error), opts ...client.Option) (*client.Client, *recorder) {
	rec := &recorder{next: loopback(t), answer: answer}
	return srv.Client(append([]client.Option{client.WithHTTPClient(&http.Client{Transport: rec})}, opts...)...), rec
}

// doneGeneration creates a generation with args, lets it render and
// returns it done.
func doneGeneration(t testing.TB, ctx context.Context, srv *clienttest.Server, c *client.Client, args client.Args) *mediagen.Generation {
	t.Helper()
	g, err := c.CreateGeneration(ctx, args)
	require.NoError(t, err)
	srv.Advance(10 * time.Minute)
	g, err = c.GetGeneration(ctx, g.ID)
	require.NoError(t, err)
	require.Equal(t, mediagen.GenerationStatusDone, g.Status, g.Error)
	return g
}
