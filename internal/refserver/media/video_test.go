package media

import (
	"bytes"
	"encoding/binary"
	"image/color"
	"image/png"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clip720 is the clip the size and speed budgets are about: 6 s of 16:9
// 720p with sound.
var clip720 = Clip{Width: 1280, Height: 720, Duration: 6 * time.Second, Palette: "a neon logo", Seed: "gen_720", Sound: Chime}

func TestClipVideoTrack(t *testing.T) {
	b := clip720.MP4()
	assert.Less(t, len(b), 1<<20, "a 6 s 720p clip stays under 1 MB")
	tracks := readMP4(t, b)
	require.Len(t, tracks, 2)
	v := tracks[0]
	assert.Equal(t, "vide", v.handler)
	assert.Equal(t, [2]int{1280, 720}, [2]int{v.width, v.height})
	assert.Equal(t, "avc1", v.entry)
	require.Len(t, v.samples, 6*VideoFPS, "duration x frame rate")
	assert.Equal(t, uint64(6), v.ticks/v.scale)
	for _, d := range v.deltas {
		require.Equal(t, uint32(v.scale)/VideoFPS, d)
	}
	assert.Equal(t, []uint32{1, 25, 49, 73, 97, 121}, v.sync, "a key frame every second")

	avcC := child(t, v.entryBody, 78, "avcC")
	require.Equal(t, byte(0xe1), avcC[5], "one SPS")
	spsLen := int(binary.BigEndian.Uint16(avcC[6:]))
	profile, w, h := spsSize(t, avcC[8:8+spsLen])
	assert.Equal(t, 66, profile, "Baseline")
	assert.Equal(t, [2]int{1280, 720}, [2]int{w, h})

	for i, s := range v.samples {
		// One length-prefixed slice NAL unit per sample: IDR on key frames.
		require.Equal(t, len(s)-4, int(binary.BigEndian.Uint32(s)), "sample %d", i)
		typ := s[4] & 0x1f
		if (i % VideoFPS) == 0 {
			require.Equal(t, byte(5), typ, "sample %d", i)
		} else {
			require.Equal(t, byte(1), typ, "sample %d", i)
		}
	}
}

func TestClipCropsToOddMacroblockSizes(t *testing.T) {
	for _, size := range [][2]int{{1920, 1080}, {1080, 1920}, {1080, 1080}, {100, 36}} {
		tr := readMP4(t, Clip{Width: size[0], Height: size[1], Duration: time.Second}.MP4())
		require.Len(t, tr, 1, "no sound asked, no audio track")
		avcC := child(t, tr[0].entryBody, 78, "avcC")
		_, w, h := spsSize(t, avcC[8:8+int(binary.BigEndian.Uint16(avcC[6:]))])
		assert.Equal(t, size, [2]int{w, h})
	}
}

func TestClipAudioTrackIsAudibleFLACAsLongAsTheVideo(t *testing.T) {
	for _, sound := range []Sound{Chime, Speech} {
		tracks := readMP4(t, Clip{Width: 64, Height: 64, Duration: 2500 * time.Millisecond, Sound: sound, Voice: "v", Text: "t"}.MP4())
		require.Len(t, tracks, 2)
		a := tracks[1]
		assert.Equal(t, "soun", a.handler)
		assert.Equal(t, "fLaC", a.entry)
		assert.Equal(t, uint64(flacRate), a.scale)
		assert.Equal(t, uint64(flacRate*5/2), a.ticks, "2.5 s, as the video")

		// The samples after the dfLa metadata are a native FLAC stream.
		dfLa := child(t, a.entryBody, 28, "dfLa")
		native := append([]byte("fLaC"), dfLa[4:]...)
		var pcm []int16
		for _, s := range a.samples {
			native = append(native, s...)
			pcm = append(pcm, verbatimSamples(t, s)...)
		}
		require.NoError(t, validateFLAC(native), "CRCs and sample count check out")
		d, err := flacDuration(native)
		require.NoError(t, err)
		assert.Equal(t, 2500*time.Millisecond, d)
		require.Len(t, pcm, flacRate*5/2)
		var sum float64
		for _, s := range pcm {
			sum += float64(s) * float64(s)
		}
		assert.Greater(t, math.Sqrt(sum/float64(len(pcm)))/32768, 0.05, "audible: RMS above -26 dBFS")
	}
}

// verbatimSamples reads the PCM of one frame flacEncode wrote.
func verbatimSamples(t *testing.T, frame []byte) []int16 {
	t.Helper()
	f, ok := parseFLACFrame(frame)
	require.True(t, ok)
	body := frame[len(frame)-2-2*f.blockSize:]
	require.Equal(t, byte(0x02), frame[len(frame)-3-2*f.blockSize], "a verbatim subframe")
	out := make([]int16, f.blockSize)
	for i := range out {
		out[i] = int16(binary.BigEndian.Uint16(body[2*i:]))
	}
	return out
}

func TestClipMoves(t *testing.T) {
	c := clip720.normalized()
	s := newScene(c)
	prev, cur := make([]ycc, s.mbW*s.mbH), make([]ycc, s.mbW*s.mbH)
	s.render(0, prev, nil)
	changed := 0
	for i := 1; i < s.frames; i++ {
		s.render(i, cur, nil)
		if !equalPics(prev, cur) {
			changed++
		}
		prev, cur = cur, prev
	}
	assert.Greater(t, changed, s.frames/2, "most frames differ from the one before")
}

func equalPics(a, b []ycc) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPosterIsTheFirstFrame(t *testing.T) {
	for _, c := range []Clip{clip720, {Width: 1080, Height: 1920, Duration: time.Second, Palette: "p"}} {
		img, err := png.Decode(bytes.NewReader(c.Poster()))
		require.NoError(t, err)
		require.Equal(t, [2]int{c.Width, c.Height}, [2]int{img.Bounds().Dx(), img.Bounds().Dy()})
		s := newScene(c.normalized())
		pic, rgb := make([]ycc, s.mbW*s.mbH), make([]color.NRGBA, s.mbW*s.mbH)
		s.render(0, pic, rgb)
		for y := 0; y < c.Height; y += 7 {
			for x := 0; x < c.Width; x += 13 {
				require.Equal(t, rgb[(y/16)*s.mbW+x/16], color.NRGBAModel.Convert(img.At(x, y)), "pixel %d,%d", x, y)
			}
		}
	}
}

func TestClipLookFollowsItsArguments(t *testing.T) {
	base := Clip{Width: 64, Height: 64, Duration: time.Second, Palette: "sunset", Seed: "gen_1"}
	assert.Equal(t, base.MP4(), base.MP4(), "deterministic")
	other := base
	other.Palette = "forest"
	assert.NotEqual(t, base.Poster(), other.Poster(), "the prompt sets the colours")

	red := base
	red.Background = "#f00"
	img, err := png.Decode(bytes.NewReader(red.Poster()))
	require.NoError(t, err)
	// The top-left cell of the checker is darkened by an eighth.
	assert.Equal(t, color.NRGBA{224, 0, 0, 255}, color.NRGBAModel.Convert(img.At(0, 0)), "the background starts the gradient")
	assert.Equal(t, toYCC(color.NRGBA{255, 255, 255, 255}), ycc{235, 128, 128}, "limited range white")
	assert.Equal(t, toYCC(color.NRGBA{0, 0, 0, 255}), ycc{16, 128, 128}, "limited range black")
}

func TestParseHexColor(t *testing.T) {
	for in, want := range map[string]color.NRGBA{"#fff": {255, 255, 255, 255}, "#12aB3c": {0x12, 0xab, 0x3c, 255}} {
		got, ok := parseHexColor(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "fff", "#ffff", "#gggggg", "#-12345"} {
		_, ok := parseHexColor(in)
		assert.False(t, ok, in)
	}
}

// BenchmarkRenderVideo720p6s renders the budgeted clip: 6 s of 720p with
// its sound track. The budget is 50 ms on one core.
func BenchmarkRenderVideo720p6s(b *testing.B) {
	var n int
	for b.Loop() {
		n = len(clip720.MP4())
	}
	b.ReportMetric(float64(n), "bytes/clip")
}

// BenchmarkRenderVideo1080p10s renders the largest reveal: 10 s of 1080p.
func BenchmarkRenderVideo1080p10s(b *testing.B) {
	c := Clip{Width: 1920, Height: 1080, Duration: 10 * time.Second, Palette: "p", Sound: Chime}
	var n int
	for b.Loop() {
		n = len(c.MP4())
	}
	b.ReportMetric(float64(n), "bytes/clip")
}

func BenchmarkPoster720p(b *testing.B) {
	for b.Loop() {
		clip720.Poster()
	}
}
