package refserver

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/feature"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// validArgs returns minimal accepted arguments of every feature.
func validArgs(img string) map[string]map[string]any {
	return map[string]map[string]any{
		"image/generation":                        {"prompt": "a lighthouse"},
		"image/self-portrait":                     {"image": img, "prompt": "me", "permissionConfirmed": true},
		"image/product-shot":                      {"image": img, "prompt": "on marble"},
		"image/youtube-thumbnail":                 {"prompt": "big reveal"},
		"image/ad":                                {"image": img, "prompt": "summer sale"},
		"video/logo-reveal":                       {"image": img, "prompt": "neon sparks"},
		string(mediagen.FeatureVideoObjectReveal): {"image": img, "prompt": "spin"},
		"video/avatar":                            {"voiceId": "ava-warm-narrator", "script": "Hello!", "permissionConfirmed": true},
		"audio/voiceover":                         {"voiceId": "80cb22f0-6f42-4d9f-b729-57ddd40c66a8", "script": "Hello!"},
	}
}

func TestEveryFeatureAcceptsItsMinimalArgs(t *testing.T) {
	h := newHarness(t)
	img := h.uploadImage(keyA)
	for _, f := range feature.All {
		for _, spelling := range []string{f.Name, f.Legacy} {
			g := h.mustCreate(keyA, spelling, validArgs(img)[f.Name])
			assert.Equal(t, spelling, string(g.Feature))
			assert.Equal(t, f.Kind, string(g.Kind))
		}
	}
}

func TestInvalidArgsAnswer400NamingTheArgument(t *testing.T) {
	h := newHarness(t)
	img := h.uploadImage(keyA)
	wav := h.upload(keyA, map[string][]byte{"a.wav": media.WAV(12*time.Second, "s")}, "a.wav")[0]
	with := func(f string, k string, v any) (string, map[string]any) {
		args := map[string]any{}
		for key, val := range validArgs(img)[f] {
			args[key] = val
		}
		if v == nil {
			delete(args, k)
		} else {
			args[k] = v
		}
		return f, args
	}
	cases := []struct {
		name, arg string
		feature   string
		args      map[string]any
	}{}
	add := func(name, arg string, f string, args map[string]any) {
		cases = append(cases, struct {
			name, arg string
			feature   string
			args      map[string]any
		}{name, arg, f, args})
	}
	f, a := with("image/generation", "prompt", nil)
	add("missing prompt", "prompt", f, a)
	f, a = with("image/generation", "prompt", "   ")
	add("blank prompt", "prompt", f, a)
	f, a = with("image/generation", "prompt", 42)
	add("prompt number", "prompt", f, a)
	f, a = with("image/generation", "prompt", strings.Repeat("x", maxLength("image/generation", "prompt")+1))
	add("prompt too long", "prompt", f, a)
	f, a = with("image/generation", "aspect_ratio", "16:9")
	add("unknown argument", "aspect_ratio", f, a)
	f, a = with("image/generation", "aspectRatio", "21:9")
	add("bad aspect", "aspectRatio", f, a)
	f, a = with("image/generation", "fineDetails", "true")
	add("bool as string", "fineDetails", f, a)
	f, a = with("image/generation", "image", wav)
	add("audio as image", "image", f, a)
	f, a = with("image/product-shot", "image", nil)
	add("missing image", "image", f, a)
	f, a = with("image/product-shot", "image", "file_missing")
	add("unknown file", "image", f, a)
	f, a = with("image/product-shot", "image", 7)
	add("file id number", "image", f, a)
	f, a = with("video/logo-reveal", "duration", "5")
	add("duration string", "duration", f, a)
	f, a = with("video/logo-reveal", "duration", 5.5)
	add("duration fraction", "duration", f, a)
	f, a = with("video/logo-reveal", "duration", 11)
	add("duration high", "duration", f, a)
	f, a = with("video/logo-reveal", "duration", 2)
	add("duration low", "duration", f, a)
	f, a = with("video/logo-reveal", "aspectRatio", "1:1")
	add("reveal aspect", "aspectRatio", f, a)
	f, a = with("video/logo-reveal", "mode", "sideways")
	add("mode", "mode", f, a)
	f, a = with("video/logo-reveal", "background", "red")
	add("background", "background", f, a)
	f, a = with("video/logo-reveal", "resolution", "4k")
	add("resolution", "resolution", f, a)
	f, a = with("video/logo-reveal", "generateAudio", 1)
	add("generateAudio", "generateAudio", f, a)
	f, a = with(string(mediagen.FeatureVideoObjectReveal), "fineDetails", true)
	add("argument of another feature", "fineDetails", f, a)
	f, a = with("video/avatar", "script", strings.Repeat("a", maxLength("video/avatar", "script")+1))
	add("avatar script too long", "script", f, a)
	f, a = with("video/avatar", "voiceId", "no-such-voice")
	add("unknown voice", "voiceId", f, a)
	f, a = with("audio/voiceover", "script", "")
	add("empty script", "script", f, a)
	f, a = with("audio/voiceover", "script", strings.Repeat("a", maxLength("audio/voiceover", "script")+1))
	add("voiceover script too long", "script", f, a)
	f, a = with("audio/voiceover", "voiceId", nil)
	add("missing voice", "voiceId", f, a)
	f, a = with("image/generation", "image", nil)
	a["image"] = nil
	add("null", "image", f, a)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := h.create(keyA, tc.feature, tc.args)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode(), string(resp.Body))
			require.NotNil(t, resp.JSON400)
			assert.Contains(t, resp.JSON400.Error.Message, "args."+tc.arg)
			assert.NotContains(t, resp.JSON400.Error.Message, keyA)
		})
	}
	assert.Equal(t, 100.0, h.srv.Balance(keyA), "nothing charged on 400")
}

func TestBoundaryValuesAreAccepted(t *testing.T) {
	h := newHarness(t)
	img := h.uploadImage(keyA)
	for _, args := range []map[string]any{
		{"image": img, "prompt": "p", "duration": 3, "background": "#fff", "mode": "outro", "aspectRatio": "9:16", "generateAudio": true, "resolution": "1080p"},
		{"image": img, "prompt": "p", "duration": 10.0, "background": "#A0b1C2"},
	} {
		h.mustCreate(keyA, "video/logo-reveal", args)
	}
	h.mustCreate(keyA, "audio/voiceover", map[string]any{"voiceId": "ava-warm-narrator", "script": strings.Repeat("é", maxLength("audio/voiceover", "script"))})
	// Any feature accepts a prompt taken from a template.
	h.mustCreate(keyA, "audio/voiceover", map[string]any{"voiceId": "ava-warm-narrator", "script": "hi", "prompt": "warm and slow"})
	h.mustCreate(keyA, "video/avatar", map[string]any{"voiceId": "ava-warm-narrator", "script": "hi", "prompt": "studio", "permissionConfirmed": true})
}

func TestFileValidation(t *testing.T) {
	h := newHarness(t)
	img := h.uploadImage(keyA)
	// A PNG signature without a decodable image is refused as an image.
	broken := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...)
	ct, body := multipartBody(t, map[string][]byte{"b.png": broken}, []string{"b.png"}, nil)
	resp, err := h.client(keyA).UploadFilesWithBodyWithResponse(t.Context(), ct, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), "storage keeps what it was given")
	r := h.create(keyA, "image/ad", map[string]any{"image": resp.JSON200.Files[0].ID, "prompt": "p"})
	require.Equal(t, http.StatusBadRequest, r.StatusCode())
	assert.Contains(t, r.JSON400.Error.Message, "not an image")

	// Files expire 24 hours after landing.
	h.advance(24 * time.Hour)
	r = h.create(keyA, "image/ad", map[string]any{"image": img, "prompt": "p"})
	require.Equal(t, http.StatusBadRequest, r.StatusCode())
	assert.Contains(t, r.JSON400.Error.Message, "not found")
	h.srv.mu.Lock()
	assert.Empty(t, h.srv.files, "expired files are dropped")
	h.srv.mu.Unlock()
}

// maxLength is the contract's bound on the characters of a text argument.
func maxLength(f, arg string) int {
	info, _ := feature.Lookup(f)
	a, _ := info.Arg(arg)
	return a.MaxLength
}
