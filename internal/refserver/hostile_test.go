package refserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/refserver/media/mediatest"
)

// memoryUse runs f and reports the bytes allocated meanwhile, which bound
// the growth of the heap from above, and the largest growth of the live
// heap seen by sampling it every half millisecond.
func memoryUse(f func()) (allocated, peak uint64) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := heap()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(500 * time.Microsecond)
		defer tick.Stop()
		for {
			if h := heap(); h > base && h-base > peak {
				peak = h - base
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	close(done)
	wg.Wait()
	return after.TotalAlloc - before.TotalAlloc, peak
}

// Images a few hundred KB long that announce 50 megapixels of valid
// pixels, 8 of a kind uploaded at once: checking them must not take the
// memory decoding them would (8 bytes a pixel for a 16-bit PNG, twice
// over when interlaced; 15 for a progressive 4:4:4 JPEG).
func TestHostileImageUploadsStayUnder200MB(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and checks 1.6 gigapixels of images")
	}
	const side = 7071 // just under 50 megapixels
	h := newHarness(t)
	for name, b := range map[string][]byte{
		"16-bit RGBA interlaced PNG": mediatest.PNG(side, side, mediatest.RGBA, 16, true),
		"progressive 4:4:4 JPEG":     mediatest.ProgressiveJPEG(side, side),
		"GIF of 8 frames":            mediatest.GIF(side, side, 8),
		"lossless WebP":              mediatest.LosslessWebP(side, side),
	} {
		type upload struct {
			ct   string
			body []byte
		}
		uploads := make([]upload, 8)
		for i := range uploads {
			ct, body := multipartBody(t, map[string][]byte{"hostile": b}, []string{"hostile"}, nil)
			uploads[i] = upload{ct, body.Bytes()}
		}
		statuses := make([]int, len(uploads))
		allocated, peak := memoryUse(func() {
			var wg sync.WaitGroup
			for i, u := range uploads {
				wg.Go(func() {
					resp, err := h.client(keyA).UploadFilesWithBodyWithResponse(context.Background(), u.ct, bytes.NewReader(u.body))
					if assert.NoError(t, err) {
						statuses[i] = resp.StatusCode()
					}
				})
			}
			wg.Wait()
		})
		t.Logf("%s: 8 uploads of %d KB: %d MB allocated, live heap up %d MB at most", name, len(b)>>10, allocated>>20, peak>>20)
		assert.Less(t, allocated, uint64(200<<20), name)
		for _, s := range statuses {
			assert.Equal(t, http.StatusOK, s, name)
		}
	}
}

// An image over the pixel bound is refused by its header, and a WebP over
// the memory its check may take is refused without being decoded: 400,
// with the reason, and nothing charged.
func TestOversizedImagesAreRefusedUncharged(t *testing.T) {
	h := newHarness(t)
	before := h.srv.Balance(keyA)
	for name, c := range map[string]struct {
		b    []byte
		want string
	}{
		"an 8192x8192 16-bit interlaced PNG": {mediatest.PNG(8192, 8192, mediatest.RGBA, 16, true), "over the 50-megapixel limit"},
		"a 7071x7071 lossless WebP":          {mediatest.LosslessWebP(7071, 7071), "over the 96 MB"},
	} {
		var id string
		allocated, _ := memoryUse(func() {
			id = h.upload(keyA, map[string][]byte{"big": c.b}, "big")[0]
		})
		assert.Less(t, allocated, uint64(2*len(c.b)+(8<<20)), "%s: refused before decoding", name)
		r := h.create(keyA, "image/ad", map[string]any{"image": id, "prompt": "a poster"})
		require.Equal(t, http.StatusBadRequest, r.StatusCode(), "%s: %s", name, r.Body)
		assert.Equal(t, "invalid_argument", string(r.JSON400.Error.Code), name)
		assert.Contains(t, r.JSON400.Error.Message, c.want, name)
	}
	assert.Equal(t, before, h.srv.Balance(keyA), "nothing charged")
}

// A voice sample must be speech by its sample rate and by the length its
// real samples last; a file of a few bytes claiming seconds is not. Each
// is refused with its reason, and nothing is charged.
func TestDegenerateVoiceSamplesAreRefusedUncharged(t *testing.T) {
	h := newHarness(t)
	before := h.srv.Balance(keyA)
	for name, c := range map[string]struct {
		b    []byte
		want string
	}{
		"the 64-byte WAV of 20 samples at 1 Hz":    {mediatest.WAV(1, 20), "sample rate of 1 Hz"},
		"12 s at 4000 Hz":                          {mediatest.WAV(4000, 12*4000), "sample rate of 4000 Hz"},
		"10 s at 200 kHz":                          {mediatest.WAV(200_000, 10*200_000), "sample rate of 200000 Hz"},
		"9.9 s at 8000 Hz":                         {mediatest.WAV(8000, 79_200), "too short"},
		"an Ogg stream of 600 bytes claiming 20 s": {mediatest.OggVorbis(48000, 20*time.Second, 500), "bytes"},
	} {
		id := h.upload(keyA, map[string][]byte{"sample": c.b}, "sample")[0]
		r := h.cloneVoice(keyA, "Ren", id)
		require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", name, r.body)
		var e api.Error
		require.NoError(t, json.Unmarshal([]byte(r.body), &e), name)
		assert.Equal(t, api.ErrorCodeInvalidArgument, e.Error.Code, name)
		assert.Contains(t, r.body, c.want, name)
	}
	assert.Equal(t, before, h.srv.Balance(keyA), "nothing charged")

	// Telephone speech, 10 s of it, is a sample; and charged.
	id := h.upload(keyA, map[string][]byte{"sample": mediatest.WAV(8000, 10*8000)}, "sample")[0]
	r := h.cloneVoice(keyA, "Ren", id)
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.Less(t, h.srv.Balance(keyA), before)
}

// A prompt or script without a visible character, made only of control,
// space or invisible format characters, is refused with 400 and nothing
// is charged; visible text around such characters is a prompt.
func TestInvisiblePromptsAreRefusedUncharged(t *testing.T) {
	h := newHarness(t)
	before := h.srv.Balance(keyA)
	for name, s := range map[string]string{
		"NUL":                          "\x00",
		"control characters":           "\x00\x01\x1f\x7f\u0085",
		"spaces and line breaks":       " \t\n\r\u00a0\u2028\u2029\u3000",
		"zero-width and joiners":       "\u200b\u200c\u200d\u2060\ufeff",
		"a soft hyphen":                "\u00ad",
		"bidirectional controls":       "\u202a\u202e\u2066\u2069",
		"Hangul fillers":               "\u115f\u1160\u3164\uffa0",
		"a variation selector and CGJ": "\ufe0f\u034f",
		"tag characters":               "\U000e0001\U000e0020\U000e007f",
		"a mix of all of them":         " \x00\u200b\u3164\ufe0f\n",
	} {
		r := h.create(keyA, "image/generation", map[string]any{"prompt": s})
		require.Equal(t, http.StatusBadRequest, r.StatusCode(), "prompt of %s: %s", name, r.Body)
		assert.Equal(t, api.ErrorCodeInvalidArgument, r.JSON400.Error.Code, name)
		assert.Contains(t, r.JSON400.Error.Message, "args.prompt", name)
		assert.Contains(t, r.JSON400.Error.Message, "visible", name)

		r = h.create(keyA, "audio/voiceover", map[string]any{"voiceId": avaID, "script": s})
		require.Equal(t, http.StatusBadRequest, r.StatusCode(), "script of %s: %s", name, r.Body)
		assert.Contains(t, r.JSON400.Error.Message, "args.script", name)
	}
	assert.Equal(t, before, h.srv.Balance(keyA), "nothing charged")

	for _, s := range []string{"a", "😀", "\u00a0x\u200b", "🏳️‍🌈", "x\x00", "\u0301"} {
		h.mustCreate(keyA, "image/generation", map[string]any{"prompt": s})
	}
}

// A clone's name is held to the same rule.
func TestInvisibleVoiceNameIsRefusedUncharged(t *testing.T) {
	h := newHarness(t)
	sample := h.sample(keyA, 12*time.Second)
	before := h.srv.Balance(keyA)
	r := h.cloneVoice(keyA, "\x00\u200b", sample)
	require.Equal(t, http.StatusBadRequest, r.status, r.body)
	assert.Contains(t, r.body, "name")
	assert.Equal(t, before, h.srv.Balance(keyA), "nothing charged")
}
