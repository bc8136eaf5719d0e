package media

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/refserver/media/mediatest"
)

func TestAudioDuration(t *testing.T) {
	// MPEG-1 layer III frames hold 1152 samples at 44.1 kHz.
	frames := func(n int) time.Duration { return time.Duration(n*1152) * time.Second / 44100 }
	for _, tc := range []struct {
		name string
		b    []byte
		want time.Duration
	}{
		{"wav 16-bit stereo", wavSample(1, 2, 48000, 16, 48000*4/2), 500 * time.Millisecond},
		{"wav float mono", wavSample(3, 1, 8000, 32, 8000*4*3), 3 * time.Second},
		{"wav compressed by byte rate", wavSample(0x55, 1, 1000, 8, 2500), 2500 * time.Millisecond},
		{"wav truncated data counts bytes present", wavSample(1, 1, 1000, 8, 4000)[:44+1000], time.Second},
		{"wav with extra chunk first", func() []byte {
			b := wavSample(1, 1, 1000, 8, 2000)
			list := cat([]byte("LIST"), le32(3), []byte("abc\x00")) // odd size, padded
			out := cat(b[:12], list, b[12:])
			binary.LittleEndian.PutUint32(out[4:], uint32(len(out)-8))
			return out
		}(), 2 * time.Second},
		{"flac", flacSample(44100, 44100*90), 90 * time.Second},
		{"flac 96k", flacSample(96000, 48000), 500 * time.Millisecond},
		{"ogg vorbis", cat(
			oggPageSample(7, 0, vorbisID(44100)),
			oggPageSample(7, 44100, []byte("audio")),
			oggPageSample(9, 999999999, []byte("other stream")),
			oggPageSample(7, ^uint64(0), []byte("packet continues")),
			oggPageSample(7, 44100*2+22050, []byte("audio")),
		), 2500 * time.Millisecond},
		{"ogg opus minus pre-skip", cat(
			oggPageSample(1, 0, opusHead(312)),
			oggPageSample(1, 48000*30+312, make([]byte, 600)),
		), 30 * time.Second},
		{"ogg flac", cat(
			oggPageSample(1, 0, cat([]byte("\x7fFLAC\x01\x00\x00\x01"), flacSample(16000, 0))),
			oggPageSample(1, 16000*4, []byte("x")),
		), 4 * time.Second},
		{"mp3 frames", cat(mp3Frame(), mp3Frame(), mp3Frame()), frames(3)},
		{"mp3 after id3 with trailing tag", cat(id3Tag(100), mp3Frame(), mp3Frame(), []byte("TAG")), frames(2)},
		{"mp3 junk before first frame", cat(id3Tag(10), []byte{0xff, 0x00, 0xff, 0xfb}, mp3Frame(), mp3Frame()), frames(2)},
		{"mp3 Info frame count", cat(xingFrame(1000), mp3Frame()), frames(1000)},
		{"mp3 VBRI frame count", func() []byte {
			f := mp3Frame()
			copy(f[36:], "VBRI")
			binary.BigEndian.PutUint32(f[36+14:], 50)
			return cat(f, mp3Frame())
		}(), frames(50)},
		{"ogg speex", cat(
			oggPageSample(3, 0, cat([]byte("Speex   "), make([]byte, 28), le32(16000), make([]byte, 40))),
			oggPageSample(3, 16000*5, []byte("x")),
		), 5 * time.Second},
		{"mp3 Info without count is skipped", cat(xingFrame(0), mp3Frame(), mp3Frame()), frames(2)},
		{"m4a", m4aSample("M4A ", "soun", 44100, 44100*12), 12 * time.Second},
		{"mp4 sound track", m4aSample("isom", "soun", 48000, 24000), 500 * time.Millisecond},
		{"webm duration", webmSample("webm", 4321.5, 2), 4321500 * time.Microsecond},
		{"webm video with audio", webmSample("webm", 2000, 1, 2), 2 * time.Second},
		{"webm no duration uses last block", webmSample("webm", 0, 2), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AudioDuration(tc.b)
			if tc.want == 0 {
				assert.Error(t, err, "only a block at time zero: no length")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestAudioDurationRejects(t *testing.T) {
	hugeWebM := webmSample("webm", 1e300, 2)
	for name, b := range map[string][]byte{
		"empty":              nil,
		"text":               []byte("a text file, not audio"),
		"png":                PNG(4, 4, ""),
		"video only mp4":     MP4(time.Second, 8, 8),
		"wav zero data":      wavSample(1, 1, 8000, 16, 0),
		"wav zero rate":      wavSample(1, 1, 0, 16, 100),
		"wav zero align":     wavSample(1, 0, 8000, 16, 100),
		"wav partial sample": wavSample(1, 2, 8000, 16, 2),
		"wav no fmt":         cat([]byte("RIFF"), le32(12), []byte("WAVEdata"), le32(0)),
		"wav short fmt":      cat([]byte("RIFF"), le32(12), []byte("WAVEfmt "), le32(2), []byte{1, 0}),
		"flac unknown total": flacSample(44100, 0),
		"flac zero rate":     flacSample(0, 100),
		"flac not streaminfo first": func() []byte {
			b := flacSample(44100, 100)
			b[4] = 0x84
			return b
		}(),
		"flac truncated":     flacSample(44100, 100)[:20],
		"ogg only headers":   oggPageSample(1, 0, vorbisID(44100)),
		"ogg opus pre-skip":  cat(oggPageSample(1, 0, opusHead(312)), oggPageSample(1, 300, []byte("x"))),
		"ogg unknown codec":  cat(oggPageSample(1, 0, []byte("\x80theora")), oggPageSample(1, 50, nil)),
		"ogg zero rate":      cat(oggPageSample(1, 0, vorbisID(0)), oggPageSample(1, 50, nil)),
		"ogg truncated page": oggPageSample(1, 0, vorbisID(44100))[:30],
		"mp3 id3 only":       id3Tag(50),
		"mp3 id3 overlong":   id3Tag(50)[:30],
		"mp3 single header":  []byte{0xff, 0xfb, 0x90, 0x00},
		"m4a no sound track": m4aSample("M4A ", "vide", 1000, 1000),
		"m4a zero duration":  m4aSample("M4A ", "soun", 1000, 0),
		"webm video only":    webmSample("webm", 1000, 1),
		"webm huge duration": hugeWebM,
		"webm no tracks":     webmSample("webm", 1000),
		"matroska":           webmSample("matroska", 1000, 2),
	} {
		_, err := AudioDuration(b)
		assert.Error(t, err, name)
	}
}

func TestAudioDurationHostileSizes(t *testing.T) {
	// Length fields claiming gigabytes must neither panic nor allocate.
	wav := wavSample(1, 1, 8000, 8, 8)
	binary.LittleEndian.PutUint32(wav[40:], 0xffffffff)
	d, err := AudioDuration(wav)
	require.NoError(t, err)
	assert.Equal(t, time.Millisecond, d, "only the 8 bytes present count")

	fmtHuge := wavSample(1, 1, 8000, 8, 8)
	binary.LittleEndian.PutUint32(fmtHuge[16:], 0xfffffff0)
	_, err = AudioDuration(fmtHuge)
	assert.Error(t, err, "fmt swallowing the data chunk leaves no data")

	flac := flacSample(44100, 100)
	flac[5], flac[6], flac[7] = 0xff, 0xff, 0xff
	_, err = AudioDuration(flac)
	assert.Error(t, err)

	page := oggPageSample(1, 0, vorbisID(44100))
	page[26] = 255 // 255 segments claimed, few present
	_, err = AudioDuration(page)
	assert.Error(t, err)

	m4a := m4aSample("M4A ", "soun", 1000, 1000)
	i := bytes.Index(m4a, []byte("moov"))
	binary.BigEndian.PutUint32(m4a[i-4:], 0x7fffffff)
	_, err = AudioDuration(m4a)
	assert.Error(t, err)

	webm := webmSample("webm", 1000, 2)
	i = bytes.Index(webm, []byte{0x44, 0x89})
	copy(webm[i+3:], []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) // Duration claims ~2^55 bytes
	_, err = AudioDuration(webm)
	assert.Error(t, err, "the walk stops at the overlong leaf, before Tracks")
}

func TestTicksToDuration(t *testing.T) {
	d, err := ticksToDuration(3, 4)
	require.NoError(t, err)
	assert.Equal(t, 750*time.Millisecond, d)

	d, err = ticksToDuration(1<<40, 1<<30)
	require.NoError(t, err)
	assert.Equal(t, 1024*time.Second, d)

	_, err = ticksToDuration(1, 0)
	assert.Error(t, err)
	_, err = ticksToDuration(^uint64(0), 1)
	assert.Error(t, err)
}

func TestProbeAudioSampleRate(t *testing.T) {
	// An M4A whose sound track's media clock is not its sample rate.
	mp4a := box("mp4a", make([]byte, 6), u16(1), make([]byte, 8), u16(2), u16(16), u16(0), u16(0), u32(22050<<16))
	m4aRate := func(entry []byte) []byte {
		mdhd := fullBox("mdhd", 0, 0, u32(0), u32(0), u32(1000), u32(12000), u16(0x55c4), u16(0))
		hdlr := fullBox("hdlr", 0, 0, u32(0), []byte("soun"), make([]byte, 12), []byte{0})
		stbl := box("stbl", fullBox("stsd", 0, 0, u32(1), entry))
		trak := box("trak", box("mdia", mdhd, hdlr, box("minf", stbl)))
		mvhd := fullBox("mvhd", 0, 0, u32(0), u32(0), u32(1000), u32(12000), make([]byte, 80))
		return cat(box("ftyp", []byte("M4A "), u32(0), []byte("isom")), box("moov", mvhd, trak), box("mdat", []byte{1}))
	}
	// A QuickTime version 2 sound description keeps its rate as a float64.
	qtV2 := box("lpcm", make([]byte, 6), u16(1), u16(2), u16(0), make([]byte, 4),
		u16(3), u16(16), u16(0xfffe), u16(0), u32(1<<16), u32(72), le64be(96000), make([]byte, 20))
	webmRate := func(rate float64) []byte {
		w := webmSample("webm", 2000, 2)
		track := ebml(mkvTrackID, ebml(mkvTrackTypeID, []byte{2}))
		withRate := ebml(mkvTrackID, ebml(mkvTrackTypeID, []byte{2}), ebml(0xE1, ebmlF64(0xB5, rate)))
		return bytes.Replace(w, ebml(mkvTracksID, track), ebml(mkvTracksID, withRate), 1)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want int
	}{
		{"wav", wavSample(1, 2, 48000, 16, 48000*4/2), 48000},
		{"wav at 1 Hz", mediatest.WAV(1, 20), 1},
		{"wav compressed", wavSample(0x55, 1, 22050, 8, 2500), 22050},
		{"flac", flacSample(44100, 44100*90), 44100},
		{"flac at 1 Hz", flacSample(1, 20), 1},
		{"ogg vorbis", cat(oggPageSample(7, 0, vorbisID(44100)), oggPageSample(7, 44100, []byte("a"))), 44100},
		{"ogg opus decodes at 48 kHz", cat(oggPageSample(1, 0, opusHead(312)), oggPageSample(1, 48000*3, []byte("a"))), 48000},
		{"ogg flac", cat(
			oggPageSample(1, 0, cat([]byte("\x7fFLAC\x01\x00\x00\x01"), flacSample(16000, 0))),
			oggPageSample(1, 16000*4, []byte("x")),
		), 16000},
		{"ogg speex", cat(
			oggPageSample(3, 0, cat([]byte("Speex   "), make([]byte, 28), le32(16000), make([]byte, 40))),
			oggPageSample(3, 16000*5, []byte("x")),
		), 16000},
		{"mp3", cat(mp3Frame(), mp3Frame()), 44100},
		{"m4a without a sample entry: its media clock", m4aSample("M4A ", "soun", 44100, 44100*12), 44100},
		{"m4a sample entry", m4aRate(mp4a), 22050},
		{"m4a QuickTime v2 sample entry", m4aRate(qtV2), 96000},
		{"webm default", webmSample("webm", 2000, 2), 8000},
		{"webm", webmRate(48000), 48000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ProbeAudio(tc.b)
			require.NoError(t, err)
			assert.Equal(t, tc.want, a.SampleRate)
			d, err := AudioDuration(tc.b)
			require.NoError(t, err)
			assert.Equal(t, d, a.Duration)
		})
	}
}

func le64be(f float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)) }
