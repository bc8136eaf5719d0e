package refserver

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// sampleFile reads a whole file of one format from the media package's
// test data.
func sampleFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("media", "testdata", "valid", name))
	require.NoError(t, err)
	return b
}

// cutShort drops the last third of b (at least one byte).
func cutShort(b []byte) []byte {
	return b[:len(b)-max(1, len(b)/3)]
}

// verdict returns why the server judged file id invalid, "" if it did not.
func (h *harness) verdict(id string) string {
	h.srv.mu.Lock()
	defer h.srv.mu.Unlock()
	f, ok := h.srv.files[id]
	require.True(h.t, ok, id)
	return f.invalid
}

func TestTruncatedImageIsRefusedAndNotCharged(t *testing.T) {
	h := newHarness(t)
	logo := media.PNG(200, 100, "logo")
	cut := h.upload(keyA, map[string][]byte{"logo.png": logo[:64]}, "logo.png")[0]
	before := h.srv.Balance(keyA)

	r := h.create(keyA, "video/logo-reveal", map[string]any{"image": cut, "prompt": "sparks"})
	require.Equal(t, http.StatusBadRequest, r.StatusCode(), string(r.Body))
	assert.Equal(t, api.ErrorCodeInvalidArgument, r.JSON400.Error.Code)
	assert.Contains(t, r.JSON400.Error.Message, "not a whole, valid image")
	assert.Equal(t, before, h.srv.Balance(keyA), "nothing charged")

	// The same cut through the signed upload.
	status, _, body := h.raw(http.MethodPost, "/v3/files/upload-url", keyA, "application/json",
		strings.NewReader(`{"bytes": 64, "contentType": "image/png"}`))
	require.Equal(t, http.StatusOK, status, string(body))
	var u mediagen.UploadURL
	require.NoError(t, json.Unmarshal(body, &u))
	req, err := http.NewRequest(http.MethodPut, u.UploadURL, strings.NewReader(string(logo[:64])))
	require.NoError(t, err)
	req.Header.Set("Content-Type", u.Headers.ContentType)
	status, _, body = h.rawRequest(req)
	require.Equal(t, http.StatusOK, status, string(body))
	r = h.create(keyA, "video/logo-reveal", map[string]any{"image": u.File.ID, "prompt": "sparks"})
	require.Equal(t, http.StatusBadRequest, r.StatusCode(), string(r.Body))
	assert.Equal(t, before, h.srv.Balance(keyA), "nothing charged")

	// The whole file is accepted, and charged.
	whole := h.upload(keyA, map[string][]byte{"logo.png": logo}, "logo.png")[0]
	h.mustCreate(keyA, "video/logo-reveal", map[string]any{"image": whole, "prompt": "sparks"})
	assert.Less(t, h.srv.Balance(keyA), before)
}

func TestInvalidUTF8BodyIsRefusedAndNotCharged(t *testing.T) {
	h := newHarness(t)
	img := h.uploadImage(keyA)
	wav := h.upload(keyA, map[string][]byte{"v.wav": media.WAV(12e9, "v")}, "v.wav")[0]
	before := h.srv.Balance(keyA)
	gen := func(args string) string {
		return `{"feature": "image/ad", "args": {"image": "` + img + `", ` + args + `}}`
	}
	for name, c := range map[string]struct{ path, body string }{
		"a prompt with a Latin-1 byte":   {"/v3/generations", gen("\"prompt\": \"caf\xe9\"")},
		"a key with a stray byte":        {"/v3/generations", gen("\"prompt\": \"ok\", \"\xff\": 1")},
		"an overlong encoding":           {"/v3/generations", gen("\"prompt\": \"\xc0\xafetc\"")},
		"a lone high surrogate escape":   {"/v3/generations", gen(`"prompt": "\ud800 and more"`)},
		"a lone low surrogate escape":    {"/v3/generations", gen(`"prompt": "x\uDC00"`)},
		"reversed surrogates":            {"/v3/generations", gen(`"prompt": "\udc00\ud800"`)},
		"the feature":                    {"/v3/generations", "{\"feature\": \"image/ad\xfe\", \"args\": {}}"},
		"a voice clone's name":           {"/v3/voices", "{\"name\": \"Ren\xe9\", \"audio\": \"" + wav + "\"}"},
		"a signed upload's content type": {"/v3/files/upload-url", "{\"bytes\": 10, \"contentType\": \"image/png\xff\"}"},
		"an agent call":                  {"/v3/mcp", "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\", \"params\": {\"x\": \"\xff\"}}"},
	} {
		status, hdr, body := h.raw(http.MethodPost, c.path, keyA, "application/json", strings.NewReader(c.body))
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", name, body)
		assert.Equal(t, "invalid_argument", errorCode(t, hdr, body), name)
		assert.Regexp(t, "UTF-8|surrogate", string(body), name)
	}
	assert.Equal(t, before, h.srv.Balance(keyA), "nothing charged")

	// A surrogate pair is one character, and valid UTF-8 passes unchanged.
	status, _, body := h.raw(http.MethodPost, "/v3/generations", keyA, "application/json",
		strings.NewReader(gen(`"prompt": "\ud83d\ude00 café"`)))
	require.Equal(t, http.StatusOK, status, string(body))
	var g api.GenerationEnvelope
	require.NoError(t, json.Unmarshal(body, &g))
	assert.Equal(t, "😀 café", g.Generation.Params["prompt"])
}

func TestJSONTextProblem(t *testing.T) {
	for body, ok := range map[string]bool{
		`{"a": "plain"}`:                 true,
		`{"a": "\\ud800"}`:               true, // an escaped backslash, then text
		`{"a": "\"\ud83d\ude00"}`:        true,
		`{"a": "\u00e9\u20AC"}`:          true,
		`{"a": "\ud83d"}`:                false,
		`{"a": "\ud83d\u0041"}`:          false,
		`{"a": "\ud83d`:                  false,
		"{\"a\": \"\xed\xa0\x80\"}":      false, // a surrogate encoded in UTF-8
		`{"a": "\u12"}`:                  true,  // malformed: the decoder's to report
		`\`:                              true,
		`"\ud800" is outside an object`:  false,
		`{"key \udfff": 1}`:              false,
		`{"a": 1} "\ud800 after the end`: false,
	} {
		assert.Equal(t, ok, jsonTextProblem([]byte(body)) == "", body)
	}
}

// Each format's whole sample is judged valid on upload and its cut is not;
// inputs of the kinds generations and clones take are refused with 400
// and charge nothing.
func TestTruncatedInputsAreRefusedAndNotCharged(t *testing.T) {
	h := newHarness(t)
	before := h.srv.Balance(keyA)
	formats := map[string]func(id string) (int, string){
		"image": func(id string) (int, string) {
			r := h.create(keyA, "image/ad", map[string]any{"image": id, "prompt": "p"})
			return r.StatusCode(), string(r.Body)
		},
		"audio": func(id string) (int, string) {
			status, _, body := h.raw(http.MethodPost, "/v3/voices", keyA, "application/json",
				strings.NewReader(`{"name": "n", "audio": "`+id+`"}`))
			return status, string(body)
		},
	}
	for _, c := range []struct{ sample, use string }{
		{"png", "image"}, {"jpeg", "image"}, {"gif", "image"}, {"gif_anim", "image"},
		{"webp_lossy", "image"}, {"webp_vp8l", "image"}, {"webp_alpha", "image"}, {"webp_anim", "image"},
		{"wav", "audio"}, {"mp3", "audio"}, {"ogg", "audio"}, {"flac", "audio"}, {"m4a", "audio"},
		{"webm_audio", "audio"}, {"webm", "audio"},
		{"mp4", ""}, {"pdf", ""}, {"zip", ""},
	} {
		b := sampleFile(t, c.sample)
		ids := h.upload(keyA, map[string][]byte{"whole": b, "cut": cutShort(b)}, "whole", "cut")
		assert.Empty(t, h.verdict(ids[0]), c.sample)
		assert.NotEmpty(t, h.verdict(ids[1]), c.sample)
		if use := formats[c.use]; use != nil {
			status, body := use(ids[1])
			assert.Equal(t, http.StatusBadRequest, status, "%s: %s", c.sample, body)
			assert.Regexp(t, "not a whole, valid|not an image that can be decoded", body, c.sample)
		}
	}
	assert.Equal(t, before, h.srv.Balance(keyA), "nothing charged")
}
