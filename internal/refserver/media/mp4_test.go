package media

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mp4Containers are the box types whose bodies are themselves boxes in the
// files MP4 writes.
var mp4Containers = map[string]bool{"moov": true, "trak": true, "mdia": true, "minf": true, "dinf": true, "stbl": true}

// walkAll visits every box recursively and returns the bytes covered, so a
// test can check the boxes tile the file exactly.
func walkAll(t *testing.T, b []byte, path string, seen map[string]bool) int {
	t.Helper()
	covered := 0
	require.NoError(t, walkBoxes(b, func(x mp4Box) bool {
		seen[path+x.typ] = true
		covered += 8 + len(x.body)
		if mp4Containers[x.typ] {
			assert.Equal(t, len(x.body), walkAll(t, x.body, path+x.typ+"/", seen), x.typ)
		}
		return true
	}))
	return covered
}

func TestMP4ProbeRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		w, h int
	}{
		{5 * time.Second, 256, 144},
		{1500 * time.Millisecond, 64, 64},
		{2 * time.Minute, 1920, 1080},
		{time.Second, 1080, 1920},
	} {
		b := MP4(tc.d, tc.w, tc.h)
		d, w, h, err := ProbeMP4(b)
		require.NoError(t, err)
		assert.Equal(t, tc.d, d)
		assert.Equal(t, tc.w, w)
		assert.Equal(t, tc.h, h)

		mt, kind := Detect(b)
		assert.Equal(t, TypeMP4, mt)
		assert.Equal(t, Video, kind)
		require.NoError(t, Validate(b), "uploads accept it")
	}
}

func TestMP4BoxesTileTheFile(t *testing.T) {
	b := Clip{Width: 128, Height: 96, Duration: 3 * time.Second, Sound: Chime}.MP4()
	seen := map[string]bool{}
	assert.Equal(t, len(b), walkAll(t, b, "", seen))
	for _, p := range []string{
		"ftyp", "moov/mvhd", "moov/trak/tkhd", "moov/trak/mdia/mdhd", "moov/trak/mdia/hdlr",
		"moov/trak/mdia/minf/vmhd", "moov/trak/mdia/minf/smhd", "moov/trak/mdia/minf/dinf/dref",
		"moov/trak/mdia/minf/stbl/stsd", "moov/trak/mdia/minf/stbl/stts", "moov/trak/mdia/minf/stbl/stss",
		"moov/trak/mdia/minf/stbl/stsc", "moov/trak/mdia/minf/stbl/stsz",
		"moov/trak/mdia/minf/stbl/stco", "mdat",
	} {
		assert.True(t, seen[p], p)
	}
}

func TestMP4SamplesTileTheMdat(t *testing.T) {
	b := Clip{Width: 64, Height: 64, Duration: 2500 * time.Millisecond, Sound: Speech}.MP4()
	mdat := bytes.LastIndex(b, []byte("mdat")) + 4
	covered := mdat
	// Chunks alternate a second at a time: the first video chunk starts
	// the mdat, and together the samples fill it exactly.
	tracks := readMP4(t, b)
	require.Len(t, tracks, 2)
	for _, tr := range tracks {
		for _, s := range tr.samples {
			covered += len(s)
		}
	}
	assert.Equal(t, len(b), covered)
	assert.Equal(t, uintptr(mdat), ptrOffset(b, tracks[0].samples[0]), "video first")
	second := tracks[0].samples[VideoFPS]
	lastAudio := tracks[1].samples[flacRate/flacBlock-1]
	assert.Less(t, ptrOffset(b, lastAudio), ptrOffset(b, second), "the first second of sound precedes the second second of video")
}

// ptrOffset is where sub starts inside b.
func ptrOffset(b, sub []byte) uintptr {
	return uintptr(cap(b) - cap(sub))
}

func TestMP4DeterministicRoundedAndClamped(t *testing.T) {
	assert.Equal(t, MP4(time.Second, 64, 64), MP4(time.Second, 64, 64))

	d, w, h, err := ProbeMP4(MP4(1499*time.Microsecond, 0, 99999))
	require.NoError(t, err)
	assert.Equal(t, 42*time.Millisecond, d, "one frame at 24 fps, to the millisecond")
	assert.Equal(t, MinVideoSide, w)
	assert.Equal(t, MaxVideoSide, h)

	_, w, h, err = ProbeMP4(MP4(time.Second, 101, 33))
	require.NoError(t, err)
	assert.Equal(t, [2]int{100, 32}, [2]int{w, h}, "4:2:0 needs even sides")

	d, _, _, err = ProbeMP4(MP4(-time.Second, 8, 8))
	require.NoError(t, err)
	assert.Equal(t, 42*time.Millisecond, d, "at least one frame")

	d, _, _, err = ProbeMP4(MP4(100*time.Hour, 16, 16))
	require.NoError(t, err)
	assert.Equal(t, MaxMP4Duration, d)
}

func TestProbeMP4VersionOneAndLargeSize(t *testing.T) {
	mvhd := fullBox("mvhd", 1, 0, make([]byte, 16), u32(90000), binary.BigEndian.AppendUint64(nil, 90000*7), make([]byte, 80))
	tkhd := fullBox("tkhd", 1, 3, make([]byte, 84), u32(320<<16), u32(240<<16))
	hdlr := fullBox("hdlr", 0, 0, u32(0), []byte("vide"), make([]byte, 12), []byte{0})
	moov := box("moov", mvhd, box("trak", tkhd, box("mdia", hdlr)))
	// A 64-bit-size mdat (size field 1) and a to-the-end box (size 0).
	large := cat(u32(1), []byte("mdat"), binary.BigEndian.AppendUint64(nil, 20), []byte{1, 2, 3, 4})
	toEnd := cat(u32(0), []byte("free"), []byte("tail"))
	b := cat(box("ftyp", []byte("mp42"), u32(0)), large, moov, toEnd)

	d, w, h, err := ProbeMP4(b)
	require.NoError(t, err)
	assert.Equal(t, 7*time.Second, d)
	assert.Equal(t, [2]int{320, 240}, [2]int{w, h})
}

func TestProbeMP4AudioOnly(t *testing.T) {
	d, w, h, err := ProbeMP4(m4aSample("M4A ", "soun", 44100, 44100*3))
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, d)
	assert.Zero(t, w)
	assert.Zero(t, h)
}

func TestProbeMP4Hostile(t *testing.T) {
	good := MP4(2*time.Second, 64, 64)
	huge := bytes.Clone(good)
	binary.BigEndian.PutUint32(huge[len(box("ftyp", make([]byte, 24))):], 0xfffffff0) // moov size
	zeroScale := bytes.Clone(good)
	i := bytes.Index(zeroScale, []byte("mvhd"))
	binary.BigEndian.PutUint32(zeroScale[i+16:], 0)
	v1Huge := cat(box("moov", fullBox("mvhd", 1, 0, make([]byte, 16), u32(1), binary.BigEndian.AppendUint64(nil, ^uint64(0)))))

	for name, b := range map[string][]byte{
		"empty":          nil,
		"text":           []byte("hello world, not a movie"),
		"truncated":      good[:len(good)/16],
		"huge box size":  huge,
		"size below hdr": cat(u32(4), []byte("moov")),
		"no mvhd":        box("moov", box("trak")),
		"short mvhd":     box("moov", fullBox("mvhd", 0, 0, u32(0))),
		"bad version":    box("moov", fullBox("mvhd", 7, 0, make([]byte, 40))),
		"zero timescale": zeroScale,
		"overflow":       v1Huge,
		"short large":    cat(u32(1), []byte("moov"), []byte{0, 0}),
	} {
		_, _, _, err := ProbeMP4(b)
		assert.Error(t, err, name)
	}
}

func BenchmarkPNG(b *testing.B) {
	for b.Loop() {
		PNG(256, 256, "bench")
	}
}

func BenchmarkWAV25Minutes(b *testing.B) {
	for b.Loop() {
		WAV(25*time.Minute, "bench")
	}
}

func BenchmarkMP4(b *testing.B) {
	for b.Loop() {
		MP4(10*time.Second, 1280, 720)
	}
}
