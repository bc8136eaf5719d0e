package refserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// Keys of the two projects every harness has.
const (
	keyA = "key-project-a"
	keyB = "key-project-b"
)

var testStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// harness is a reference server behind httptest with a fake clock, two
// projects and a recorder of events.
type harness struct {
	t     *testing.T
	srv   *Server
	ts    *httptest.Server
	clock *FakeClock

	mu     sync.Mutex
	events []Event
}

func newHarness(t *testing.T, opts ...Option) *harness {
	t.Helper()
	h := &harness{t: t, clock: NewFakeClock(testStart)}
	base := []Option{
		WithClock(h.clock),
		WithProject(keyA, 100),
		WithProject(keyB, 100),
		WithEventSink(func(ev Event) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.events = append(h.events, ev)
		}),
	}
	h.srv = New(append(base, opts...)...)
	h.ts = httptest.NewServer(h.srv)
	t.Cleanup(func() {
		h.ts.Close()
		h.srv.Close()
	})
	return h
}

// client returns a generated client sending key as the Authorization header.
func (h *harness) client(key string) *api.ClientWithResponses {
	c, err := api.NewClientWithResponses(h.ts.URL, api.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		if key != "" {
			r.Header.Set("Authorization", key)
		}
		return nil
	}))
	require.NoError(h.t, err)
	return c
}

// advance moves the clock and settles the server.
func (h *harness) advance(d time.Duration) {
	h.clock.Advance(d)
	h.srv.Settle()
}

// recorded returns the events received so far.
func (h *harness) recorded() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Event(nil), h.events...)
}

// raw sends a request with an optional key and returns status, headers and body.
func (h *harness) raw(method, path, key, contentType string, body io.Reader) (int, http.Header, []byte) {
	h.t.Helper()
	url := path
	if !strings.HasPrefix(path, "http") {
		url = h.ts.URL + path
	}
	req, err := http.NewRequest(method, url, body)
	require.NoError(h.t, err)
	if key != "" {
		req.Header.Set("Authorization", key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(h.t, err)
	return resp.StatusCode, resp.Header, b
}

// errorCode decodes a JSON error body and returns its code, failing the
// test when the body is not the documented shape.
func errorCode(t *testing.T, h http.Header, body []byte) string {
	t.Helper()
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	var e api.Error
	require.NoError(t, json.Unmarshal(body, &e), string(body))
	require.NotEmpty(t, e.Error.Code, string(body))
	require.NotEmpty(t, e.Error.Message, string(body))
	return string(e.Error.Code)
}

// multipartBody builds a multipart form with one part per file under "files".
func multipartBody(t testing.TB, files map[string][]byte, order []string, types map[string]string) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, name := range order {
		hdr := textproto.MIMEHeader{}
		hdr.Set("Content-Disposition", `form-data; name="files"; filename="`+name+`"`)
		ct := "application/octet-stream"
		if types != nil && types[name] != "" {
			ct = types[name]
		}
		hdr.Set("Content-Type", ct)
		w, err := mw.CreatePart(hdr)
		require.NoError(t, err)
		_, err = w.Write(files[name])
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	return mw.FormDataContentType(), &buf
}

// upload sends files through the multipart route as key and returns ids.
func (h *harness) upload(key string, files map[string][]byte, order ...string) []string {
	h.t.Helper()
	ct, body := multipartBody(h.t, files, order, nil)
	resp, err := h.client(key).UploadFilesWithBodyWithResponse(context.Background(), ct, body)
	require.NoError(h.t, err)
	require.Equal(h.t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	ids := make([]string, len(resp.JSON200.Files))
	for i, f := range resp.JSON200.Files {
		ids[i] = f.ID
	}
	return ids
}

// uploadImage uploads a small PNG as key and returns its id.
func (h *harness) uploadImage(key string) string {
	return h.upload(key, map[string][]byte{"logo.png": media.PNG(64, 48, "logo")}, "logo.png")[0]
}

// create submits a generation as key and returns the answer.
func (h *harness) create(key, feat string, args map[string]any) *api.CreateGenerationResponse {
	h.t.Helper()
	resp, err := h.client(key).CreateGenerationWithResponse(context.Background(), api.CreateGenerationRequest{Feature: mediagen.Feature(feat), Args: args})
	require.NoError(h.t, err)
	return resp
}

// mustCreate submits a generation that must be accepted.
func (h *harness) mustCreate(key, feat string, args map[string]any) mediagen.Generation {
	h.t.Helper()
	resp := h.create(key, feat, args)
	require.Equal(h.t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	return resp.JSON200.Generation
}

// get fetches a generation as key.
func (h *harness) get(key, id string) *api.GetGenerationResponse {
	h.t.Helper()
	resp, err := h.client(key).GetGenerationWithResponse(context.Background(), id)
	require.NoError(h.t, err)
	return resp
}

func TestUnknownPathsAndMethodsAnswerJSON(t *testing.T) {
	h := newHarness(t)
	status, hdr, body := h.raw(http.MethodGet, "/v3/nope", keyA, "", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "not_found", errorCode(t, hdr, body))

	status, hdr, body = h.raw(http.MethodPatch, "/v3/generations", keyA, "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	assert.Equal(t, "method_not_allowed", errorCode(t, hdr, body))
	assert.Contains(t, hdr.Get("Allow"), http.MethodGet)

	status, hdr, body = h.raw(http.MethodGet, "/elsewhere", "", "", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "not_found", errorCode(t, hdr, body))
}

func TestMalformedBodiesAnswer400AndChargeNothing(t *testing.T) {
	h := newHarness(t)
	cases := map[string]string{
		"not json":           `{"feature":`,
		"array":              `[]`,
		"feature not string": `{"feature":5,"args":{}}`,
		"args not object":    `{"feature":"image/generation","args":[1]}`,
		"args string":        `{"feature":"image/generation","args":"prompt"}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			status, hdr, b := h.raw(http.MethodPost, "/v3/generations", keyA, "application/json", strings.NewReader(body))
			assert.Equal(t, http.StatusBadRequest, status, string(b))
			assert.Equal(t, "invalid_argument", errorCode(t, hdr, b))
		})
	}
	status, hdr, b := h.raw(http.MethodPost, "/v3/files/upload-url", keyA, "application/json", strings.NewReader(`{"bytes":"12","contentType":"image/png"}`))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_argument", errorCode(t, hdr, b))
	assert.Contains(t, string(b), "bytes must be an integer, not a JSON string")

	status, _, b = h.raw(http.MethodPost, "/v3/generations", keyA, "application/json", strings.NewReader(``))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, string(b), "empty")

	status, hdr, b = h.raw(http.MethodGet, "/v3/generations?limit=abc", keyA, "", nil)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_argument", errorCode(t, hdr, b))

	assert.Equal(t, 100.0, h.srv.Balance(keyA))
	resp, err := h.client(keyA).GetPricingWithResponse(context.Background())
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode(), "the server still answers")
}

func TestOversizedJSONBodyAnswers400(t *testing.T) {
	h := newHarness(t)
	big := `{"feature":"image/generation","args":{"prompt":"` + strings.Repeat("x", maxJSONBody) + `"}}`
	status, hdr, b := h.raw(http.MethodPost, "/v3/generations", keyA, "application/json", strings.NewReader(big))
	assert.Equal(t, http.StatusBadRequest, status, "413 is only for bytes on the signed upload request")
	assert.Equal(t, "invalid_argument", errorCode(t, hdr, b))
	assert.Contains(t, string(b), "request body is larger than 1 MiB")
	assert.Equal(t, 100.0, h.srv.Balance(keyA))
	g := h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "still answers"})
	assert.Equal(t, mediagen.GenerationStatusPending, g.Status)
}

func TestCloseIsIdempotentAndServingGoesOn(t *testing.T) {
	h := newHarness(t)
	h.srv.Close()
	h.srv.Close()
	g := h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "after close"})
	h.clock.Advance(time.Minute)
	assert.Equal(t, mediagen.GenerationStatusDone, h.get(keyA, g.ID).JSON200.Generation.Status, "requests settle lazily")
}

func TestConcurrentClientsAreSafe(t *testing.T) {
	h := newHarness(t, WithRenderScale(0.001))
	h.srv.SetBalance(keyA, 1000)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := h.client(keyA)
			for j := range 10 {
				resp, err := c.CreateGenerationWithResponse(context.Background(), api.CreateGenerationRequest{
					Feature: "image/generation", Args: map[string]any{"prompt": "p"},
				})
				if !assert.NoError(t, err) || !assert.Equal(t, http.StatusOK, resp.StatusCode()) {
					return
				}
				if (i+j)%3 == 0 {
					_, err = c.DeleteGenerationWithResponse(context.Background(), resp.JSON200.Generation.ID)
					assert.NoError(t, err)
				}
				_, err = c.ListGenerationsWithResponse(context.Background(), &api.ListGenerationsParams{})
				assert.NoError(t, err)
				h.clock.Advance(time.Second)
			}
		}()
	}
	wg.Wait()
	h.srv.Settle()
	assert.InDelta(t, 1000-160*0.04, h.srv.Balance(keyA), 1e-9)
}
