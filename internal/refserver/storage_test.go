package refserver

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// reserve asks for a signed upload of data as contentType.
func (h *harness) reserve(key string, data []byte, contentType string) mediagen.UploadURL {
	h.t.Helper()
	resp, err := h.client(key).CreateUploadURLWithResponse(context.Background(), api.CreateUploadURLRequest{Bytes: int64(len(data)), ContentType: contentType})
	require.NoError(h.t, err)
	require.Equal(h.t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	return *resp.JSON200
}

// put sends body to a signed upload URL with the given headers.
func put(t *testing.T, rawURL string, body []byte, contentType string, length int64, auth string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, rawURL, bytes.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.ContentLength = length
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}

func TestSignedUploadLandsAndIsUsable(t *testing.T) {
	h := newHarness(t)
	data := media.PNG(40, 30, "signed")
	u := h.reserve(keyA, data, "image/png")

	// Not live before the PUT.
	resp := h.create(keyA, "image/ad", map[string]any{"image": u.File.ID, "prompt": "p"})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode())

	status, body := put(t, u.UploadURL, data, u.Headers.ContentType, int64(len(data)), "")
	require.Equal(t, http.StatusOK, status, string(body))
	assert.Empty(t, body)
	h.mustCreate(keyA, "image/ad", map[string]any{"image": u.File.ID, "prompt": "p"})

	// Project B cannot use it.
	resp = h.create(keyB, "image/ad", map[string]any{"image": u.File.ID, "prompt": "p"})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode())
}

func TestSignedUploadRefusals(t *testing.T) {
	h := newHarness(t)
	data := media.WAV(time.Second, "u")
	tampered := func(raw string) string {
		p, err := url.Parse(raw)
		require.NoError(t, err)
		q := p.Query()
		sig := []byte(q.Get("signature"))
		sig[0] ^= 1
		q.Set("signature", string(sig))
		p.RawQuery = q.Encode()
		return p.String()
	}
	for name, tc := range map[string]struct {
		urlFn       func(string) string
		contentType string
		length      int64
		body        []byte
		auth        string
	}{
		"changed content type":  {nil, "audio/wave", int64(len(data)), data, ""},
		"missing content type":  {nil, "", int64(len(data)), data, ""},
		"changed length":        {nil, "audio/wav", int64(len(data) - 1), data[:len(data)-1], ""},
		"chunked, no length":    {nil, "audio/wav", -1, data, ""},
		"authorization present": {nil, "audio/wav", int64(len(data)), data, keyA},
		"tampered signature":    {tampered, "audio/wav", int64(len(data)), data, ""},
		"unsigned":              {func(raw string) string { p, _ := url.Parse(raw); p.RawQuery = ""; return p.String() }, "audio/wav", int64(len(data)), data, ""},
	} {
		t.Run(name, func(t *testing.T) {
			u := h.reserve(keyA, data, "audio/wav")
			target := u.UploadURL
			if tc.urlFn != nil {
				target = tc.urlFn(target)
			}
			status, body := put(t, target, tc.body, tc.contentType, tc.length, tc.auth)
			require.Equal(t, http.StatusForbidden, status, string(body))
			h.srv.mu.Lock()
			assert.True(t, h.srv.files[u.File.ID].landed.IsZero(), "nothing landed")
			h.srv.mu.Unlock()
		})
	}

	u := h.reserve(keyA, data, "audio/wav")
	h.advance(uploadURLValidity)
	status, _ := put(t, u.UploadURL, data, "audio/wav", int64(len(data)), "")
	assert.Equal(t, http.StatusForbidden, status, "expired")
	h.srv.mu.Lock()
	_, kept := h.srv.files[u.File.ID]
	h.srv.mu.Unlock()
	assert.False(t, kept, "expired reservations are dropped")

	u = h.reserve(keyA, data, "audio/wav")
	status, _ = put(t, u.UploadURL, data, "audio/wav", int64(len(data)), "")
	require.Equal(t, http.StatusOK, status)
	status, _ = put(t, u.UploadURL, data, "audio/wav", int64(len(data)), "")
	assert.Equal(t, http.StatusOK, status, "a retried PUT within validity is idempotent")
	req, err := http.NewRequest(http.MethodPost, u.UploadURL, bytes.NewReader(data))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestSignedUploadLengthIsExact(t *testing.T) {
	h := newHarness(t)
	data := media.PNG(10, 10, "len")
	u := h.reserve(keyA, data, "image/png")
	assert.Equal(t, int64(len(data)), u.Headers.ContentLength)
	longer := append(append([]byte{}, data...), 0)
	status, _ := put(t, u.UploadURL, longer, "image/png", int64(len(longer)), "")
	assert.Equal(t, http.StatusForbidden, status)
}

func TestAssetURLsAreSignedAndRefuseAuthorization(t *testing.T) {
	h := newHarness(t)
	g := h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "p"})
	h.advance(time.Minute)
	out := h.get(keyA, g.ID).JSON200.Generation.Output
	require.NotNil(t, out)
	status, _, _ := h.raw(http.MethodGet, out.Image, "", "", nil)
	assert.Equal(t, http.StatusOK, status)

	status, hdr, body := h.raw(http.MethodGet, out.Image, keyA, "", nil)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, "forbidden", errorCode(t, hdr, body))

	p, err := url.Parse(out.Image)
	require.NoError(t, err)
	q := p.Query()
	q.Set("expires", strconv.FormatInt(time.Now().Add(100*24*time.Hour).Unix(), 10))
	p.RawQuery = q.Encode()
	status, _, _ = h.raw(http.MethodGet, p.String(), "", "", nil)
	assert.Equal(t, http.StatusForbidden, status, "a changed expiry breaks the signature")

	status, _, _ = h.raw(http.MethodHead, out.Image, "", "", nil)
	assert.Equal(t, http.StatusOK, status)
	status, _, _ = h.raw(http.MethodDelete, out.Image, "", "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, status)
}

// A URL altered where the change would grant nothing more (a padded
// expiry, a repeated or added parameter) is still not the URL signed.
func TestStorageRefusesAlteredQueries(t *testing.T) {
	h := newHarness(t)
	g := h.finish("image/generation", map[string]any{"prompt": "a fox"})
	u, err := url.Parse(g.Output.Image)
	require.NoError(t, err)
	exp, sig := u.Query().Get("expires"), u.Query().Get("signature")
	base := h.ts.URL + u.Path
	for _, query := range []string{
		"expires=0" + exp + "&signature=" + sig,
		"expires=%2B" + exp + "&signature=" + sig,
		"expires=" + exp + "&signature=" + sig + "&expires=1",
		"expires=" + exp + "&signature=" + sig + "&x=1",
		"expires=" + exp + ";x&signature=" + sig,
	} {
		status, hdr, body := h.raw(http.MethodGet, base+"?"+query, "", "", nil)
		assert.Equal(t, http.StatusForbidden, status, query)
		assert.Equal(t, "forbidden", errorCode(t, hdr, body), query)
	}
	h.fetch(base+"?signature="+sig+"&expires="+exp, "image/png") // the order is free
}

// ServeContent's own refusals carry the JSON error body too.
func TestStorageRangeRefusalIsJSON(t *testing.T) {
	h := newHarness(t)
	g := h.finish("image/generation", map[string]any{"prompt": "a fox"})
	req, err := http.NewRequest(http.MethodGet, g.Output.Image, nil)
	require.NoError(t, err)
	req.Header.Set("Range", "bytes=999999-")
	status, hdr, body := h.rawRequest(req)
	assert.Equal(t, http.StatusRequestedRangeNotSatisfiable, status)
	assert.Equal(t, "invalid_argument", errorCode(t, hdr, body))
	assert.Empty(t, hdr.Get("Cache-Control"))
}
