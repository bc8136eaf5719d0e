package refserver

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
)

// playerPage shows one video at a time, filling a 1280x720 viewport.
const playerPage = `<!doctype html><html><head><meta charset="utf-8"><title>player</title></head>
<body style="margin:0;background:#000;overflow:hidden"></body></html>`

// playScript plays the video at %q to one second, sampling the sound
// through an analyser, then pauses and reports what the element shows; the
// pixel is read from a canvas at (x, y) = (%d, %d).
const playScript = `(async (src, x, y) => {
  if (document.readyState !== 'complete') await new Promise(r => addEventListener('load', r));
  document.body.replaceChildren();
  const v = document.createElement('video');
  v.style.cssText = 'display:block;width:100vw;height:100vh;object-fit:contain';
  v.playsInline = true;
  document.body.append(v);
  const ctx = new AudioContext();
  const an = ctx.createAnalyser();
  ctx.createMediaElementSource(v).connect(an);
  an.connect(ctx.destination);
  v.src = src;
  await new Promise((ok, fail) => {
    v.onloadeddata = ok;
    v.onerror = () => fail(new Error('media error ' + v.error.code + ': ' + v.error.message));
  });
  await ctx.resume();
  await v.play();
  const buf = new Float32Array(an.fftSize);
  let rms = 0;
  const start = performance.now();
  while (v.currentTime < 1) {
    if (performance.now() - start > 10000) throw new Error('stalled at ' + v.currentTime + ' s');
    an.getFloatTimeDomainData(buf);
    rms = Math.max(rms, Math.sqrt(buf.reduce((a, s) => a + s * s, 0) / buf.length));
    await new Promise(r => setTimeout(r, 20));
  }
  v.pause();
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const c = document.createElement('canvas');
  c.width = v.videoWidth;
  c.height = v.videoHeight;
  const g = c.getContext('2d');
  g.drawImage(v, 0, 0);
  return {
    readyState: v.readyState, currentTime: v.currentTime, duration: v.duration,
    width: v.videoWidth, height: v.videoHeight, pixel: Array.from(g.getImageData(x, y, 1, 1).data),
    frames: v.getVideoPlaybackQuality().totalVideoFrames,
    audioBytes: v.webkitAudioDecodedByteCount, rms: rms,
  };
})(%q, %d, %d)`

// played is what playScript reports.
type played struct {
	ReadyState  int
	CurrentTime float64
	Duration    float64
	Width       int
	Height      int
	Pixel       []int
	Frames      int
	AudioBytes  int
	RMS         float64
}

// TestChromiumPlaysVideoOutputs plays video outputs, fetched from the
// storage host with Range requests, in headless Chromium: they must decode
// at their size, advance past one second, show the poster's colours where
// the moving block has not been, and, with sound, carry audible audio.
// Set MEDIAGEN_VIDEO_SHOT to a file name to keep a screenshot of the first
// video at one second.
func TestChromiumPlaysVideoOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium; runs without -short")
	}
	chromium := needTool(t, "chromium", "chromium")
	h := newHarness(t)
	img := h.uploadImage(keyA)
	cases := []struct {
		feature string
		args    map[string]any
		sound   bool
	}{
		// The quickstart's logo reveal, with sound.
		{"video/logo-reveal", map[string]any{"image": img, "prompt": "sparks gather into a burst of light over a dark stage", "mode": "intro", "aspectRatio": "16:9", "duration": 5, "generateAudio": true}, true},
		{"video/avatar", map[string]any{"voiceId": "ava-warm-narrator", "script": "Hello, and welcome to the product tour.", "permissionConfirmed": true, "aspectRatio": "9:16"}, true},
		{string(mediagen.FeatureVideoObjectReveal), map[string]any{"image": img, "prompt": "a teapot", "resolution": "1080p", "aspectRatio": "4:3", "duration": 3}, false},
	}

	// The page and the storage host share an origin, so the canvas may be
	// read.
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, playerPage)
	})
	var ranges int
	mux.Handle("/storage/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") != "" {
			ranges++
		}
		h.srv.ServeHTTP(w, r)
	}))
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	b := startBrowser(t, chromium, site.URL+"/")

	for i, tc := range cases {
		o := h.finish(tc.feature, tc.args).Output
		video, err := url.Parse(o.Video)
		require.NoError(t, err)
		poster, err := png.Decode(bytes.NewReader(h.fetch(o.Poster, "image/png")))
		require.NoError(t, err)
		// The block starts at the left edge and has not reached the right
		// by one second, so the top right corner shows the background.
		x, y := o.Width-8, 8

		var got played
		b.eval(t, fmt.Sprintf(playScript, video.RequestURI(), x, y), &got)
		t.Logf("%s: %+v", tc.feature, got)
		assert.GreaterOrEqual(t, got.ReadyState, 2, "a frame is decoded")
		assert.Equal(t, [2]int{o.Width, o.Height}, [2]int{got.Width, got.Height}, tc.feature)
		assert.InDelta(t, float64(o.DurationMs)/1000, got.Duration, 0.05, tc.feature)
		assert.GreaterOrEqual(t, got.CurrentTime, 1.0, "playback advanced")
		assert.GreaterOrEqual(t, got.Frames, 20, "frames were decoded as it played")
		require.Len(t, got.Pixel, 4)
		assert.Positive(t, got.Pixel[0]+got.Pixel[1]+got.Pixel[2], "not black")
		want := color.NRGBAModel.Convert(poster.At(x, y)).(color.NRGBA)
		for c, v := range []uint8{want.R, want.G, want.B} {
			assert.InDelta(t, int(v), got.Pixel[c], 12, "%s: channel %d shows the poster's colour", tc.feature, c)
		}
		if tc.sound {
			assert.Positive(t, got.AudioBytes, "%s: the audio track decoded", tc.feature)
			assert.Greater(t, got.RMS, 0.02, "%s: and is audible", tc.feature)
		} else {
			assert.Zero(t, got.AudioBytes, tc.feature)
		}
		if i == 0 {
			shot := screenshot(t, b)
			assert.Equal(t, image.Pt(1280, 720), shot.Bounds().Size())
			sp := color.NRGBAModel.Convert(shot.At(x, y)).(color.NRGBA)
			assert.InDelta(t, int(want.G), int(sp.G), 12, "the screen shows the video")
		}
	}
	assert.Positive(t, ranges, "Chromium fetched with Range requests")
}

// screenshot captures the page and keeps it where MEDIAGEN_VIDEO_SHOT
// says.
func screenshot(t *testing.T, b *browser) image.Image {
	t.Helper()
	var res struct{ Data string }
	b.must(t, "Page.captureScreenshot", map[string]any{"format": "png"}, &res)
	raw, err := base64.StdEncoding.DecodeString(res.Data)
	require.NoError(t, err)
	if path := os.Getenv("MEDIAGEN_VIDEO_SHOT"); path != "" {
		require.NoError(t, os.WriteFile(path, raw, 0o644))
	}
	img, err := png.Decode(bytes.NewReader(raw))
	require.NoError(t, err)
	return img
}
