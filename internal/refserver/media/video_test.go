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
	assert.Equal(t, []uint32{1, 49, 97}, v.sync, "a key frame every two seconds")

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
		if i%mp4KeyInterval == 0 {
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
	for _, c := range []Clip{
		{Width: 64, Height: 64, Duration: 2500 * time.Millisecond, Sound: Chime, Voice: "v", Text: "t"},
		{Width: 64, Height: 64, Duration: 2500 * time.Millisecond, Sound: Speech, Voice: "v", Text: "t"},
		{Width: 64, Height: 64, Duration: 25 * time.Second / VideoFPS, Sound: Speech, Voice: "w", Text: "short last block"},
	} {
		tracks := readMP4(t, c.MP4())
		require.Len(t, tracks, 2)
		v, a := tracks[0], tracks[1]
		assert.Equal(t, "soun", a.handler)
		assert.Equal(t, "fLaC", a.entry)
		assert.Equal(t, uint64(flacRate), a.scale)
		assert.Equal(t, v.ticks*flacRate/v.scale, a.ticks, "as long as the video")
		size := 0
		for _, s := range a.samples {
			size += len(s)
		}
		assert.Less(t, size, int(a.ticks)*2*3/4, "predicted and Rice-coded, not verbatim")

		// The samples after the dfLa metadata are a native FLAC stream.
		dfLa := child(t, a.entryBody, 28, "dfLa")
		native := append([]byte("fLaC"), dfLa[4:]...)
		var pcm []int16
		for _, s := range a.samples {
			native = append(native, s...)
			pcm = append(pcm, decodeFLACFrame(t, s)...)
		}
		require.NoError(t, validateFLAC(native), "CRCs and sample count check out")
		d, err := AudioDuration(native)
		require.NoError(t, err)
		assert.InDelta(t, time.Duration(v.ticks)*time.Second/time.Duration(v.scale), d, float64(time.Second/flacRate), "within a sample")
		require.Equal(t, clipPCM(c), pcm, "lossless")
		var sum float64
		for _, s := range pcm {
			sum += float64(s) * float64(s)
		}
		assert.Greater(t, math.Sqrt(sum/float64(len(pcm)))/32768, 0.05, "audible: RMS above -26 dBFS")
	}
}

// decodeFLACFrame decodes a frame encodeFLACFrames wrote: a mono 16-bit
// subframe, verbatim or FIXED order 2 with Rice-coded residuals.
func decodeFLACFrame(t *testing.T, frame []byte) []int16 {
	t.Helper()
	f, ok := parseFLACFrame(frame)
	require.True(t, ok)
	n := f.blockSize
	hdr := 4 + 1 // sync, codes, the one-byte frame number...
	for c := frame[4]; c&0x80 != 0 && c&0x40 != 0; c <<= 1 {
		hdr++ // ...or its continuation bytes
	}
	r := &bitReader{b: frame[hdr+2+1 : len(frame)-2]} // block size, CRC-8; CRC-16 at the end
	out := make([]int16, n)
	switch typ := r.u(8); typ {
	case 0b0_000001_0:
		for i := range out {
			out[i] = int16(r.u(16))
		}
	case 0b0_001010_0:
		out[0], out[1] = int16(r.u(16)), int16(r.u(16))
		require.Zero(t, r.u(2), "Rice with 4-bit parameters")
		parts := 1 << r.u(4)
		i := 2
		for p := range parts {
			k := int(r.u(4))
			require.Less(t, k, 15, "no escape")
			for end := (p + 1) * n / parts; i < end; i++ {
				q := 0
				for r.u(1) == 0 {
					q++
				}
				u := uint32(q)<<k | r.u(k)
				e := int32(u>>1) ^ -int32(u&1)
				out[i] = int16(e + 2*int32(out[i-1]) - int32(out[i-2]))
			}
		}
	default:
		t.Fatalf("subframe type %08b", typ)
	}
	require.LessOrEqual(t, (r.pos+7)/8, len(r.b), "the subframe fits the frame")
	return out
}

// clipPCM is the sound a clip's track should hold.
func clipPCM(c Clip) []int16 {
	c = c.normalized()
	syn := newSynth(flacRate, c.Sound, c.Voice, c.Text)
	out := make([]int16, c.frames()*flacRate/VideoFPS)
	for i := range out {
		out[i] = int16(32767 * syn.next())
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
