package media

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// Hand-built sample files for the detection and duration tests. Each builds
// the smallest bytes that real parsers accept for the fields under test.

func le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// wavSample builds a WAVE file with a fmt chunk and dataLen zero bytes.
func wavSample(format, channels uint16, rate uint32, bits uint16, dataLen int) []byte {
	align := channels * bits / 8
	fmtChunk := cat([]byte("fmt "), le32(16), le16(format), le16(channels), le32(rate),
		le32(rate*uint32(align)), le16(align), le16(bits))
	data := cat([]byte("data"), le32(uint32(dataLen)), make([]byte, dataLen))
	body := cat([]byte("WAVE"), fmtChunk, data)
	return cat([]byte("RIFF"), le32(uint32(len(body))), body)
}

// flacSample builds a native FLAC header with one STREAMINFO block.
func flacSample(rate uint32, total uint64) []byte {
	si := make([]byte, 34)
	binary.BigEndian.PutUint64(si[10:], uint64(rate)<<44|1<<41|15<<36|total) // stereo, 16-bit
	return cat([]byte("fLaC"), []byte{0x80, 0, 0, 34}, si)
}

// oggPageSample builds one Ogg page holding body in a single packet.
func oggPageSample(serial uint32, granule uint64, body []byte) []byte {
	var segs []byte
	n := len(body)
	for n >= 255 {
		segs = append(segs, 255)
		n -= 255
	}
	segs = append(segs, byte(n))
	return cat([]byte("OggS\x00\x02"), le64(granule), le32(serial), le32(0), le32(0),
		[]byte{byte(len(segs))}, segs, body)
}

func vorbisID(rate uint32) []byte {
	return cat([]byte("\x01vorbis"), le32(0), []byte{2}, le32(rate), le32(0), le32(128000), le32(0), []byte{0xb8, 1})
}

func opusHead(preSkip uint16) []byte {
	return cat([]byte("OpusHead\x01\x02"), le16(preSkip), le32(48000), le16(0), []byte{0})
}

// mp3Frame is an MPEG-1 layer III frame, 128 kbit/s, 44.1 kHz, stereo:
// 417 bytes, 1152 samples.
func mp3Frame() []byte {
	f := make([]byte, 417)
	copy(f, []byte{0xff, 0xfb, 0x90, 0x00})
	return f
}

// xingFrame is an mp3Frame carrying an Info header that counts frames.
func xingFrame(frames uint32) []byte {
	f := mp3Frame()
	copy(f[36:], "Info")
	binary.BigEndian.PutUint32(f[40:], 1)
	binary.BigEndian.PutUint32(f[44:], frames)
	return f
}

// id3Tag is an ID3v2.4 tag with size bytes of padding.
func id3Tag(size int) []byte {
	return cat([]byte("ID3\x04\x00\x00"),
		[]byte{byte(size >> 21 & 0x7f), byte(size >> 14 & 0x7f), byte(size >> 7 & 0x7f), byte(size & 0x7f)},
		make([]byte, size))
}

// ebml builds an EBML element with an 8-byte size field.
func ebml(id uint32, data ...[]byte) []byte {
	body := cat(data...)
	idb := binary.BigEndian.AppendUint32(nil, id)
	for len(idb) > 1 && idb[0] == 0 {
		idb = idb[1:]
	}
	size := binary.BigEndian.AppendUint64(nil, uint64(len(body)))
	size[0] = 0x01
	return cat(idb, size, body)
}

// ebmlUnknown builds a master element of unknown size, as live recorders do.
func ebmlUnknown(id uint32, data ...[]byte) []byte {
	idb := binary.BigEndian.AppendUint32(nil, id)
	return cat(idb, []byte{0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, cat(data...))
}

func ebmlF64(id uint32, v float64) []byte {
	return ebml(id, binary.BigEndian.AppendUint64(nil, math.Float64bits(v)))
}

// webmSample builds a WebM file with the given track types (1 video,
// 2 audio), an optional Info Duration in milliseconds and one cluster.
func webmSample(docType string, duration float64, trackTypes ...byte) []byte {
	var tracks [][]byte
	for _, t := range trackTypes {
		tracks = append(tracks, ebml(mkvTrackID, ebml(mkvTrackTypeID, []byte{t})))
	}
	info := [][]byte{ebml(mkvScaleID, []byte{0x0f, 0x42, 0x40})}
	if duration > 0 {
		info = append(info, ebmlF64(mkvDurationID, duration))
	}
	return cat(
		ebml(ebmlHeaderID, ebml(ebmlDocTypeID, []byte(docType))),
		ebml(mkvSegmentID,
			ebml(mkvInfoID, info...),
			ebml(mkvTracksID, tracks...),
			ebml(mkvClusterID, ebml(mkvTimecodeID, []byte{0}), ebml(mkvSimpleID, []byte{0x81, 0, 0, 0x80, 1, 2})),
		),
	)
}

// m4aSample builds an ISO BMFF file with one track of the given handler.
func m4aSample(brand, handler string, scale, ticks uint32) []byte {
	mvhd := fullBox("mvhd", 0, 0, u32(0), u32(0), u32(1000), u32(ticks*1000/scale), make([]byte, 80))
	mdhd := fullBox("mdhd", 0, 0, u32(0), u32(0), u32(scale), u32(ticks), u16(0x55c4), u16(0))
	hdlr := fullBox("hdlr", 0, 0, u32(0), []byte(handler), make([]byte, 12), []byte{0})
	trak := box("trak", box("mdia", mdhd, hdlr))
	return cat(box("ftyp", []byte(brand), u32(0), []byte("isom")), box("moov", mvhd, trak), box("mdat", []byte{1, 2, 3}))
}

func jpegSample(t testing.TB, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, jpeg.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h)), nil))
	return buf.Bytes()
}

func gifSample(t testing.TB, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.White})
	require.NoError(t, gif.Encode(&buf, img, nil))
	return buf.Bytes()
}

// webpSample wraps one chunk in a RIFF/WEBP container.
func webpSample(chunk string, data []byte) []byte {
	body := cat([]byte("WEBP"), []byte(chunk), le32(uint32(len(data))), data)
	return cat([]byte("RIFF"), le32(uint32(len(body))), body)
}

func webpVP8(w, h uint16) []byte {
	return webpSample("VP8 ", cat([]byte{0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a}, le16(w), le16(h)))
}

func webpVP8L(w, h uint32) []byte {
	return webpSample("VP8L", cat([]byte{0x2f}, le32((w-1)|(h-1)<<14)))
}

func webpVP8X(w, h uint32) []byte {
	return webpSample("VP8X", cat([]byte{0, 0, 0, 0}, le32(w - 1)[:3], le32(h - 1)[:3]))
}

func zipSample(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	f, err := zw.Create("a.txt")
	require.NoError(t, err)
	_, err = f.Write([]byte("hello"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}
