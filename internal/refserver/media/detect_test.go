package media

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		mt   string
		kind Kind
	}{
		{"png", PNG(8, 8, "x"), TypePNG, Image},
		{"jpeg", jpegSample(t, 8, 8), TypeJPEG, Image},
		{"gif", gifSample(t, 8, 8), TypeGIF, Image},
		{"webp lossy", webpVP8(8, 8), TypeWebP, Image},
		{"webp lossless", webpVP8L(8, 8), TypeWebP, Image},
		{"wav", WAV(time.Second, ""), TypeWAV, Audio},
		{"mp3 id3", cat(id3Tag(20), mp3Frame()), TypeMP3, Audio},
		{"mp3 frame sync", cat(mp3Frame(), mp3Frame()), TypeMP3, Audio},
		{"ogg vorbis", oggPageSample(1, 0, vorbisID(44100)), TypeOGG, Audio},
		{"ogg opus", oggPageSample(1, 0, opusHead(312)), TypeOGG, Audio},
		{"flac", flacSample(44100, 44100), TypeFLAC, Audio},
		{"m4a brand", m4aSample("M4A ", "soun", 1000, 1000), TypeM4A, Audio},
		{"mp4 brand, sound only", m4aSample("mp42", "soun", 1000, 1000), TypeM4A, Audio},
		{"webm audio only", webmSample("webm", 1000, 2), TypeWebMAudio, Audio},
		{"mp4", MP4(time.Second, 16, 16), TypeMP4, Video},
		{"mp4 brand, video track", m4aSample("isom", "vide", 1000, 1000), TypeMP4, Video},
		{"mp4 without moov", box("ftyp", []byte("isom"), u32(0)), TypeMP4, Video},
		{"quicktime brand", box("ftyp", []byte("qt  "), u32(0)), TypeQuickTime, Video},
		{"quicktime no ftyp", cat(box("moov", box("mvhd")), box("mdat")), TypeQuickTime, Video},
		{"webm video and audio", webmSample("webm", 1000, 1, 2), TypeWebM, Video},
		{"webm without tracks", webmSample("webm", 1000), TypeWebM, Video},
		{"pdf", []byte("%PDF-1.7\n1 0 obj\n"), TypePDF, Document},
		{"zip", zipSample(t), TypeZIP, Document},
		{"empty zip", []byte("PK\x05\x06" + string(make([]byte, 18))), TypeZIP, Document},
		{"json object", []byte(` {"a": [1, 2]}` + "\n"), TypeJSON, Document},
		{"json array", []byte(`[]`), TypeJSON, Document},
		{"json scalar is text", []byte(`42`), TypeText, Document},
		{"broken json is text", []byte(`{"a":`), TypeText, Document},
		{"text", []byte("Hello, world.\r\n\tTabbed; ünïcödé ✓\f"), TypeText, Document},
		{"free-spoken text", []byte("I'm free to go"), TypeText, Document},

		{"empty", nil, TypeOctetStream, Unknown},
		{"nul byte", []byte("abc\x00def"), TypeOctetStream, Unknown},
		{"escape", []byte("abc\x1b[0m"), TypeOctetStream, Unknown},
		{"invalid utf-8", []byte("abc\xff\xfe"), TypeOctetStream, Unknown},
		{"matroska", webmSample("matroska", 1000, 1), TypeOctetStream, Unknown},
		{"heic", box("ftyp", []byte("heic"), u32(0), []byte("mif1")), TypeOctetStream, Unknown},
		{"aac adts", []byte{0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc}, TypeOctetStream, Unknown},
		{"riff other", cat([]byte("RIFF"), le32(4), []byte("AVI ")), TypeOctetStream, Unknown},
		{"short png", []byte("\x89PNG"), TypeOctetStream, Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mt, kind := Detect(tc.b)
			assert.Equal(t, tc.mt, mt)
			assert.Equal(t, tc.kind, kind)
		})
	}
}

func TestDetectWebMUnknownSizes(t *testing.T) {
	// Browsers' MediaRecorder writes Segment and Cluster with unknown sizes
	// and no Duration; the walker must still reach Tracks.
	b := cat(
		ebml(ebmlHeaderID, ebml(ebmlDocTypeID, []byte("webm"))),
		ebmlUnknown(mkvSegmentID,
			ebml(mkvTracksID, ebml(mkvTrackID, ebml(mkvTrackTypeID, []byte{2}))),
			ebmlUnknown(mkvClusterID, ebml(mkvTimecodeID, []byte{0x03, 0xe8}), ebml(mkvSimpleID, []byte{0x81, 0x01, 0xf4, 0x80})),
		),
	)
	mt, kind := Detect(b)
	assert.Equal(t, TypeWebMAudio, mt)
	assert.Equal(t, Audio, kind)
	d, err := AudioDuration(b)
	assert.NoError(t, err)
	assert.Equal(t, 1500*time.Millisecond, d, "cluster 1000 + block 500 timecode units of 1ms")
}

func TestDetectReadsTheHeadValidateTheWhole(t *testing.T) {
	b := []byte("text" + strings.Repeat(" ", 600) + "\x00")
	mt, kind := Detect(b)
	assert.Equal(t, TypeText, mt, "the sniffer reads the first 512 bytes")
	assert.Equal(t, Document, kind)
	assert.ErrorContains(t, Validate(b), "control character", "validation reads them all")

	mt, kind = Detect([]byte("<!DOCTYPE html><p>hi</p>"))
	assert.Equal(t, TypeOctetStream, mt, "HTML is not accepted, as package upload says")
	assert.Equal(t, Unknown, kind)
}
