package refserver

import (
	"bytes"
	"image/png"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// finish submits a generation, lets it render and returns it done.
func (h *harness) finish(feat string, args map[string]any) mediagen.Generation {
	h.t.Helper()
	g := h.mustCreate(keyA, feat, args)
	h.advance(5 * time.Minute)
	done := h.get(keyA, g.ID).JSON200.Generation
	require.Equal(h.t, mediagen.GenerationStatusDone, done.Status)
	require.NotNil(h.t, done.Output)
	return done
}

// fetch downloads a signed URL and checks the bytes are what the header says.
func (h *harness) fetch(rawURL, wantMime string) []byte {
	h.t.Helper()
	status, hdr, body := h.raw(http.MethodGet, rawURL, "", "", nil)
	require.Equal(h.t, http.StatusOK, status, string(body))
	assert.Equal(h.t, wantMime, hdr.Get("Content-Type"))
	detected, _ := media.Detect(body)
	assert.Equal(h.t, wantMime, detected, "the bytes are what mime says")
	return body
}

func TestImageOutputs(t *testing.T) {
	h := newHarness(t)
	for aspect, size := range map[string][2]int{"1:1": {256, 256}, "16:9": {256, 144}, "9:16": {144, 256}, "4:3": {256, 192}, "3:4": {192, 256}} {
		done := h.finish("image/generation", map[string]any{"prompt": "p", "aspectRatio": aspect})
		assert.Equal(t, "image/png", done.Output.MIME)
		assert.Zero(t, done.Output.Video)
		assert.Zero(t, done.Output.Audio)
		img, err := png.Decode(bytes.NewReader(h.fetch(done.Output.Image, "image/png")))
		require.NoError(t, err)
		assert.Equal(t, size[0], img.Bounds().Dx(), aspect)
		assert.Equal(t, size[1], img.Bounds().Dy(), aspect)
	}
	done := h.finish("image/youtube-thumbnail", map[string]any{"prompt": "p"})
	w, hgt, err := media.ImageConfig(h.fetch(done.Output.Image, "image/png"))
	require.NoError(t, err)
	assert.Equal(t, [2]int{256, 144}, [2]int{w, hgt}, "thumbnails default to 16:9")
}

func TestVideoOutputs(t *testing.T) {
	h := newHarness(t)
	img := h.uploadImage(keyA)
	cases := []struct {
		feature string
		args    map[string]any
		w, h    int
		d       time.Duration
		sound   bool
	}{
		{"video/logo-reveal", map[string]any{"image": img, "prompt": "p"}, 1280, 720, 5 * time.Second, false},
		{"video/logo-reveal", map[string]any{"image": img, "prompt": "p", "aspectRatio": "9:16", "duration": 8, "generateAudio": true}, 720, 1280, 8 * time.Second, true},
		{string(mediagen.FeatureVideoObjectReveal), map[string]any{"image": img, "prompt": "p", "resolution": "1080p", "aspectRatio": "4:3", "duration": 3}, 1440, 1080, 3 * time.Second, false},
		{"video/avatar", map[string]any{"voiceId": "ava-warm-narrator", "script": "Thirty characters of script!!", "permissionConfirmed": true, "aspectRatio": "1:1"}, 720, 720, 2 * time.Second, true},
	}
	for _, tc := range cases {
		done := h.finish(tc.feature, tc.args)
		o := done.Output
		assert.Equal(t, "video/mp4", o.MIME)
		require.NotZero(t, o.Video)
		require.NotZero(t, o.Poster)
		require.NotZero(t, o.DurationMs)
		require.NotZero(t, o.Width)
		require.NotZero(t, o.Height)
		assert.Equal(t, [3]int{tc.w, tc.h, int(tc.d / time.Millisecond)}, [3]int{o.Width, o.Height, o.DurationMs})
		video := h.fetch(o.Video, "video/mp4")
		d, w, hgt, err := media.ProbeMP4(video)
		require.NoError(t, err)
		assert.Equal(t, tc.d, d)
		assert.Equal(t, [2]int{tc.w, tc.h}, [2]int{w, hgt})
		assert.Equal(t, tc.sound, bytes.Contains(video, []byte("fLaC")), "%s: a FLAC sound track when asked", tc.feature)
		assert.Less(t, len(video), 1<<20, "small enough to serve from memory")
		assert.Equal(t, video, h.fetch(o.Video, "video/mp4"), "the same bytes on every fetch")
		pw, ph, err := media.ImageConfig(h.fetch(o.Poster, "image/png"))
		require.NoError(t, err)
		assert.Equal(t, [2]int{tc.w, tc.h}, [2]int{pw, ph})
	}
}

func TestVideoOutputServesRanges(t *testing.T) {
	h := newHarness(t)
	o := h.finish("video/logo-reveal", map[string]any{"image": h.uploadImage(keyA), "prompt": "p", "generateAudio": true}).Output
	whole := h.fetch(o.Video, "video/mp4")
	req, err := http.NewRequest(http.MethodGet, o.Video, nil)
	require.NoError(t, err)
	req.Header.Set("Range", "bytes=1000-1999")
	status, hdr, part := h.rawRequest(req)
	assert.Equal(t, http.StatusPartialContent, status)
	assert.Equal(t, "bytes 1000-1999/"+strconv.Itoa(len(whole)), hdr.Get("Content-Range"))
	assert.Equal(t, whole[1000:2000], part)

	status, hdr, _ = h.raw(http.MethodHead, o.Video, "", "", nil)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, strconv.Itoa(len(whole)), hdr.Get("Content-Length"))
}

func TestAudioOutputs(t *testing.T) {
	h := newHarness(t)
	done := h.finish("audio/voiceover", map[string]any{"voiceId": "ava-warm-narrator", "script": "This script has exactly forty-five characters."[:45]})
	assert.Equal(t, "audio/wav", done.Output.MIME)
	require.NotNil(t, done.Output.Audio)
	assert.Zero(t, done.Output.Image)
	wav := h.fetch(done.Output.Audio, "audio/wav")
	d, err := media.AudioDuration(wav)
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, d, "15 characters a second")
	// 8-bit PCM after the 44-byte header: well above silence (128).
	var sum float64
	for _, b := range wav[44:] {
		sum += (float64(b) - 128) * (float64(b) - 128)
	}
	assert.Greater(t, math.Sqrt(sum/float64(len(wav)-44))/128, 0.1, "audible: RMS above -20 dBFS")
}

func TestRenderDurations(t *testing.T) {
	assert.Equal(t, 8*time.Second, renderDuration("image", outputSpec{}))
	assert.Equal(t, 4*time.Second, renderDuration("text", outputSpec{}))
	assert.Equal(t, 14*time.Second, renderDuration("audio", outputSpec{chars: 250}))
	assert.Equal(t, 60*time.Second, renderDuration("audio", outputSpec{chars: 20000}))
	assert.Equal(t, 65*time.Second, renderDuration("video", outputSpec{duration: 10 * time.Second}))

	h := newHarness(t, WithRenderScale(0.01))
	g := h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "p"})
	h.advance(79 * time.Millisecond)
	assert.Equal(t, mediagen.GenerationStatusRunning, h.get(keyA, g.ID).JSON200.Generation.Status)
	h.advance(time.Millisecond)
	assert.Equal(t, mediagen.GenerationStatusDone, h.get(keyA, g.ID).JSON200.Generation.Status, "8 s at scale 0.01")
}

func TestTextOutputView(t *testing.T) {
	h := newHarness(t)
	g := &generation{id: "gen_text", kind: "text", out: outputSpec{mime: mimeText, text: "Draft"}, status: mediagen.GenerationStatusDone, expiresAt: testStart.Add(retention)}
	o := h.srv.outputView(g, "http://x")
	require.NotZero(t, o.Text)
	assert.Equal(t, "Draft", o.Text)
	assert.Equal(t, "text/plain", o.MIME)
	assert.Zero(t, o.Image)
}
