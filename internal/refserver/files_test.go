package refserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

func TestMultipartUpload(t *testing.T) {
	h := newHarness(t)
	files := map[string][]byte{
		"logo.png":   media.PNG(32, 32, "x"),
		"voice.wav":  media.WAV(2*time.Second, "y"),
		"notes.txt":  []byte("plain notes\n"),
		"clip.mp4":   media.MP4(time.Second, 64, 64),
		"data.json":  []byte(`{"a":1}`),
		"a-pdf.pdf":  []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n"),
		"bundle.zip": append([]byte("PK\x05\x06"), make([]byte, 18)...),
	}
	order := []string{"logo.png", "voice.wav", "notes.txt", "clip.mp4", "data.json", "a-pdf.pdf", "bundle.zip"}
	ct, body := multipartBody(t, files, order, nil)
	resp, err := h.client(keyA).UploadFilesWithBodyWithResponse(context.Background(), ct, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	require.Len(t, resp.JSON200.Files, len(order))
	seen := map[string]bool{}
	for i, f := range resp.JSON200.Files {
		require.NotZero(t, f.OriginalName)
		assert.Equal(t, order[i], f.OriginalName, "submission order")
		require.NotZero(t, f.Size)
		assert.Equal(t, int64(len(files[order[i]])), f.Size)
		assert.False(t, seen[f.ID])
		seen[f.ID] = true
	}
}

func TestMultipartLimits(t *testing.T) {
	h := newHarness(t)
	png := media.PNG(8, 8, "z")

	eleven := map[string][]byte{}
	var order []string
	for i := range 11 {
		name := fmt.Sprintf("f%02d.png", i)
		eleven[name], order = png, append(order, name)
	}
	ct, body := multipartBody(t, eleven, order, nil)
	status, hdr, b := h.raw(http.MethodPost, "/v3/files/upload", keyA, ct, body)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_argument", errorCode(t, hdr, b))

	ct, body = multipartBody(t, eleven, order[:10], nil)
	status, _, b = h.raw(http.MethodPost, "/v3/files/upload", keyA, ct, body)
	assert.Equal(t, http.StatusOK, status, string(b))

	exact := bytes.Repeat([]byte("a"), maxFileSize)
	ct, body = multipartBody(t, map[string][]byte{"big.txt": exact}, []string{"big.txt"}, nil)
	status, _, b = h.raw(http.MethodPost, "/v3/files/upload", keyA, ct, body)
	assert.Equal(t, http.StatusOK, status, "exactly 30 MiB is accepted: %s", b)

	over := bytes.Repeat([]byte("a"), maxFileSize+1)
	ct, body = multipartBody(t, map[string][]byte{"big.txt": over}, []string{"big.txt"}, nil)
	status, hdr, b = h.raw(http.MethodPost, "/v3/files/upload", keyA, ct, body)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_argument", errorCode(t, hdr, b))
}

func TestMultipartTypesComeFromTheBytes(t *testing.T) {
	h := newHarness(t)
	for name, tc := range map[string]struct {
		data     []byte
		declared string
	}{
		"executable named png":  {[]byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00"), ""},
		"random binary":         {[]byte{0, 1, 2, 3, 0xfe, 0xff, 0x80, 0x81}, ""},
		"wav declared as png":   {media.WAV(time.Second, "w"), "image/png"},
		"empty file":            {nil, ""},
		"png declared as a zip": {media.PNG(4, 4, "q"), "application/zip"},
	} {
		t.Run(name, func(t *testing.T) {
			ct, body := multipartBody(t, map[string][]byte{"file.png": tc.data}, []string{"file.png"}, map[string]string{"file.png": tc.declared})
			status, hdr, b := h.raw(http.MethodPost, "/v3/files/upload", keyA, ct, body)
			assert.Equal(t, http.StatusBadRequest, status, string(b))
			assert.Equal(t, "invalid_argument", errorCode(t, hdr, b))
		})
	}
	// An unknown declared type is a guess from the name: the bytes decide.
	ct, body := multipartBody(t, map[string][]byte{"a.png": media.PNG(4, 4, "q")}, []string{"a.png"}, map[string]string{"a.png": "application/x-unknown-guess"})
	status, _, b := h.raw(http.MethodPost, "/v3/files/upload", keyA, ct, body)
	assert.Equal(t, http.StatusOK, status, string(b))

	status, hdr, b := h.raw(http.MethodPost, "/v3/files/upload", keyA, "application/json", strings.NewReader(`{}`))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_argument", errorCode(t, hdr, b))

	ct, body = multipartBody(t, map[string][]byte{}, nil, nil)
	status, _, _ = h.raw(http.MethodPost, "/v3/files/upload", keyA, ct, body)
	assert.Equal(t, http.StatusBadRequest, status, "no file")
}

func TestUploadURLRequest(t *testing.T) {
	h := newHarness(t)
	c := h.client(keyA)
	resp, err := c.CreateUploadURLWithResponse(context.Background(), api.CreateUploadURLRequest{Bytes: 1234, ContentType: "image/png"})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	u := resp.JSON200
	assert.NotEmpty(t, u.File.ID)
	assert.Equal(t, mediagen.File{ID: u.File.ID}, u.File, "the signed route's answer carries only the id, as the contract says")
	var raw struct {
		File map[string]any `json:"file"`
	}
	require.NoError(t, json.Unmarshal(resp.Body, &raw))
	assert.Equal(t, map[string]any{"id": u.File.ID}, raw.File, "no originalName or size on the wire")
	assert.Equal(t, mediagen.UploadURLMethodPUT, u.Method)
	assert.Equal(t, 900, u.ExpiresIn)
	assert.Equal(t, mediagen.UploadHeaders{ContentType: "image/png", ContentLength: 1234}, u.Headers)
	assert.True(t, strings.HasPrefix(u.UploadURL, h.ts.URL+"/storage/"), u.UploadURL)
	assert.NotContains(t, u.UploadURL, keyA)

	for name, tc := range map[string]struct {
		body string
		want int
		code string
	}{
		"missing bytes":       {`{"contentType":"image/png"}`, 400, "invalid_argument"},
		"zero bytes":          {`{"bytes":0,"contentType":"image/png"}`, 400, "invalid_argument"},
		"negative bytes":      {`{"bytes":-5,"contentType":"image/png"}`, 400, "invalid_argument"},
		"fraction bytes":      {`{"bytes":1.5,"contentType":"image/png"}`, 400, "invalid_argument"},
		"string bytes":        {`{"bytes":"10","contentType":"image/png"}`, 400, "invalid_argument"},
		"missing type":        {`{"bytes":10}`, 400, "invalid_argument"},
		"malformed type":      {`{"bytes":10,"contentType":"png"}`, 400, "invalid_argument"},
		"over 30 MB":          {`{"bytes":31457281,"contentType":"image/png"}`, 413, "payload_too_large"},
		"not accepted":        {`{"bytes":10,"contentType":"application/x-msdownload"}`, 415, "unsupported_media_type"},
		"invented image type": {`{"bytes":10,"contentType":"image/jpg"}`, 415, "unsupported_media_type"},
	} {
		t.Run(name, func(t *testing.T) {
			status, hdr, b := h.raw(http.MethodPost, "/v3/files/upload-url", keyA, "application/json", strings.NewReader(tc.body))
			assert.Equal(t, tc.want, status, string(b))
			assert.Equal(t, tc.code, errorCode(t, hdr, b))
		})
	}
	resp, err = c.CreateUploadURLWithResponse(context.Background(), api.CreateUploadURLRequest{Bytes: maxFileSize, ContentType: "audio/x-wav"})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode(), "exactly 30 MiB and an alias type are accepted")
}

// net/http's multipart reader also takes multipart/mixed; the route is
// multipart/form-data only.
func TestUploadIsFormDataOnly(t *testing.T) {
	h := newHarness(t)
	ct, body := multipartBody(t, map[string][]byte{"a.txt": []byte("hello")}, []string{"a.txt"}, nil)
	mixed := strings.Replace(ct, "multipart/form-data", "multipart/mixed", 1)
	status, hdr, b := h.raw(http.MethodPost, "/v3/files/upload", keyA, mixed, bytes.NewReader(body.Bytes()))
	assert.Equal(t, http.StatusBadRequest, status, string(b))
	assert.Equal(t, "invalid_argument", errorCode(t, hdr, b))
	status, _, b = h.raw(http.MethodPost, "/v3/files/upload", keyA, ct, body)
	assert.Equal(t, http.StatusOK, status, string(b))
}

// A body cut inside a part that is not a file is malformed too, and keeps
// none of the files before it.
func TestUploadCutInsideAnotherPart(t *testing.T) {
	h := newHarness(t)
	body := "--B\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a.txt\"\r\n\r\nhello\r\n" +
		"--B\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\ncut her"
	status, hdr, b := h.raw(http.MethodPost, "/v3/files/upload", keyA, "multipart/form-data; boundary=B", strings.NewReader(body))
	assert.Equal(t, http.StatusBadRequest, status, string(b))
	assert.Equal(t, "invalid_argument", errorCode(t, hdr, b))
}
