package media

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tiny real WebP files (lossy, lossless, lossy with alpha, animated), as
// browsers' feature tests use them.
var webpSamples = map[string]string{
	"lossy":     "UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA",
	"lossless":  "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==",
	"alpha":     "UklGRkoAAABXRUJQVlA4WAoAAAAQAAAAAAAAAAAAQUxQSAwAAAARBxAR/Q9ERP8DAABWUDggGAAAABQBAJ0BKgEAAQAAAP4AAA3AAP7mtQAAAA==",
	"animation": "UklGRlIAAABXRUJQVlA4WAoAAAASAAAAAAAAAAAAQU5JTQYAAAD/////AABBTk1GJgAAAAAAAAAAAAAAAAAAAGQAAABWUDhMDQAAAC8AAAAQBxAREYiI/gcA",
}

func webpFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(webpSamples[name])
	require.NoError(t, err)
	return b
}

// oggPageCRC builds one Ogg page with a correct CRC; flags 2 begins a
// stream, 4 ends it.
func oggPageCRC(flags byte, serial, seq uint32, granule uint64, body []byte) []byte {
	p := oggPageSample(serial, granule, body)
	p[5] = flags
	binary.LittleEndian.PutUint32(p[18:], seq)
	binary.LittleEndian.PutUint32(p[22:], oggCRC(p))
	return p
}

// oggSample is a whole Vorbis stream of d at 48 kHz: the identification
// page and an end-of-stream page.
func oggSample(d time.Duration) []byte {
	return cat(oggPageCRC(2, 7, 0, 0, vorbisID(48000)),
		oggPageCRC(0, 7, 1, 0, make([]byte, 300)),
		oggPageCRC(4, 7, 2, uint64(d.Seconds()*48000), make([]byte, 100)))
}

// flacFrames builds a native FLAC file of n frames of 4096 samples at
// 44.1 kHz, mono, 16 bit, each a constant subframe: a file decoders play.
func flacFrames(n int) []byte {
	si := make([]byte, 34)
	binary.BigEndian.PutUint16(si[0:], 4096)
	binary.BigEndian.PutUint16(si[2:], 4096)
	binary.BigEndian.PutUint64(si[10:], uint64(44100)<<44|0<<41|15<<36|uint64(4096*n))
	out := cat([]byte("fLaC"), []byte{0x80, 0, 0, 34}, si)
	for i := range n {
		hdr := utf8.AppendRune([]byte{0xff, 0xf8, 0xc9, 0x08}, rune(i)) // frame number, UTF-8 coded
		frame := cat(hdr, []byte{crc8(hdr)}, []byte{0x00, 0x12, 0x34})
		var crc uint16
		for _, c := range frame {
			crc = crc<<8 ^ crc16Table[byte(crc>>8)^c]
		}
		out = cat(out, frame, binary.BigEndian.AppendUint16(nil, crc))
	}
	return out
}

// m4aWithSamples is an M4A file whose one sound track has n samples of
// 100 bytes in one chunk inside the mdat, lasting d.
func m4aWithSamples(n int, d time.Duration) []byte {
	ms := uint32(d.Milliseconds())
	build := func(offset uint32) []byte {
		mvhd := fullBox("mvhd", 0, 0, u32(0), u32(0), u32(1000), u32(ms), make([]byte, 80))
		mdhd := fullBox("mdhd", 0, 0, u32(0), u32(0), u32(1000), u32(ms), u16(0x55c4), u16(0))
		hdlr := fullBox("hdlr", 0, 0, u32(0), []byte("soun"), make([]byte, 12), []byte{0})
		stbl := box("stbl",
			fullBox("stsd", 0, 0, u32(0)),
			fullBox("stts", 0, 0, u32(0)),
			fullBox("stsc", 0, 0, u32(1), u32(1), u32(uint32(n)), u32(1)),
			fullBox("stsz", 0, 0, u32(100), u32(uint32(n))),
			fullBox("stco", 0, 0, u32(1), u32(offset)))
		trak := box("trak", box("mdia", mdhd, hdlr, box("minf", stbl)))
		return cat(box("ftyp", []byte("M4A "), u32(0), []byte("isom")), box("moov", mvhd, trak))
	}
	head := build(0)
	return cat(build(uint32(len(head)+8)), box("mdat", make([]byte, 100*n)))
}

// pdfSample is a one-page PDF with a correct cross-reference table.
func pdfSample() []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
	}
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

func animatedGIF(t testing.TB) []byte {
	t.Helper()
	pal := color.Palette{color.Black, color.White}
	a := &gif.GIF{}
	for i := range 3 {
		img := image.NewPaletted(image.Rect(0, 0, 16, 16), pal)
		img.SetColorIndex(i, i, 1)
		a.Image = append(a.Image, img)
		a.Delay = append(a.Delay, 10)
	}
	var buf bytes.Buffer
	require.NoError(t, gif.EncodeAll(&buf, a))
	return buf.Bytes()
}

// validSamples holds one whole file of every accepted format.
func validSamples(t testing.TB) map[string][]byte {
	mp3 := cat(id3Tag(20), xingFrame(20))
	for range 20 {
		mp3 = cat(mp3, mp3Frame())
	}
	return map[string][]byte{
		"png":        PNG(40, 30, "v"),
		"jpeg":       jpegSample(t, 40, 30),
		"gif":        gifSample(t, 40, 30),
		"gif_anim":   animatedGIF(t),
		"webp_lossy": webpFile(t, "lossy"),
		"webp_vp8l":  webpFile(t, "lossless"),
		"webp_alpha": webpFile(t, "alpha"),
		"webp_anim":  webpFile(t, "animation"),
		"wav":        WAV(2*time.Second, "v"),
		"mp3":        mp3,
		"ogg":        oggSample(3 * time.Second),
		"flac":       flacFrames(300),
		"m4a":        m4aWithSamples(5, 2*time.Second),
		"mp4":        MP4(3*time.Second, 32, 24),
		"webm":       webmSample("webm", 2000, 1, 2),
		"webm_audio": webmSample("webm", 2000, 2),
		"pdf":        pdfSample(),
		"zip":        zipSample(t),
		"json":       []byte(`{"a": [1, 2, "ü"]}`),
		"text":       []byte("plain words\n"),
	}
}

var update = flag.Bool("update", false, "rewrite testdata/valid and the FuzzValidate seeds from validSamples")

// TestValidSamplesOnDisk keeps testdata/valid, whole files that the
// reference server's tests upload, and the seeds of FuzzValidate in step
// with validSamples; go test -run TestValidSamplesOnDisk -update rewrites
// them.
func TestValidSamplesOnDisk(t *testing.T) {
	for name, b := range validSamples(t) {
		path := filepath.Join("testdata", "valid", name)
		if *update {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, b, 0o644))
			seed := filepath.Join("testdata", "fuzz", "FuzzValidate", name)
			require.NoError(t, os.MkdirAll(filepath.Dir(seed), 0o755))
			require.NoError(t, os.WriteFile(seed, fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", b), 0o644))
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "run go test -run TestValidSamplesOnDisk -update")
		assert.NoError(t, Validate(got), name)
		wantType, _ := Detect(b)
		gotType, _ := Detect(got)
		assert.Equal(t, wantType, gotType, name)
	}
}

func TestValidateAcceptsWholeFiles(t *testing.T) {
	for name, b := range validSamples(t) {
		assert.NoError(t, Validate(b), name)
	}
}

// Every cut of every sample is refused, unless the bytes left are another
// type altogether (the first bytes of a PNG may be text), which the server
// refuses for not being the kind of file an argument needs.
func TestValidateRefusesEveryCut(t *testing.T) {
	for name, b := range validSamples(t) {
		want, _ := Detect(b)
		for n := 1; n < len(b); n++ {
			// A text file cut between characters is still text.
			if name == "text" {
				continue
			}
			cut := b[:n]
			if got, _ := Detect(cut); got != want {
				continue
			}
			if name == "pdf" && n == len(b)-1 {
				continue // only the newline after %%EOF is gone
			}
			if name == "mp3" && n == len(b)-417 {
				continue // one frame off the count: see TestValidateMP3FrameCount
			}
			assert.Error(t, Validate(cut), "%s cut to %d of %d bytes", name, n, len(b))
		}
	}
}

func TestValidatePNGCutTo64Bytes(t *testing.T) {
	b := PNG(200, 100, "logo")
	_, _, err := ImageConfig(b[:64])
	require.NoError(t, err, "the header alone still reads")
	assert.ErrorContains(t, Validate(b[:64]), "does not decode")
}

func TestValidateMP3FrameCount(t *testing.T) {
	mp3 := cat(xingFrame(20))
	for range 20 {
		mp3 = cat(mp3, mp3Frame())
	}
	require.NoError(t, Validate(mp3))
	assert.NoError(t, Validate(mp3[:len(mp3)-417]), "one frame off the count is tolerated")
	assert.ErrorContains(t, Validate(mp3[:len(mp3)-2*417]), "truncated")
	// Tags after the audio are allowed; other bytes are not.
	assert.NoError(t, Validate(cat(mp3, []byte("TAG"), make([]byte, 125))))
	assert.Error(t, Validate(cat(mp3, []byte("junk after the frames"))))
}

func TestValidateRefusesCorruption(t *testing.T) {
	ogg := oggSample(3 * time.Second)
	ogg[40] ^= 0xff
	assert.ErrorContains(t, Validate(ogg), "CRC")

	flac := flacFrames(10)
	flac[len(flac)-20] ^= 0x01
	assert.Error(t, Validate(flac))

	wav := WAV(time.Second, "x")
	assert.NoError(t, Validate(wav))
	binary.LittleEndian.PutUint32(wav[40:], 1<<20) // data chunk claims more than is there
	assert.ErrorContains(t, Validate(wav), "truncated")

	// A movie whose chunk points past its mdat.
	m4a := m4aWithSamples(5, 2*time.Second)
	assert.ErrorContains(t, Validate(m4a[:len(m4a)-100]), "truncated")

	assert.Error(t, Validate([]byte("\x00\x01\x02")))
}

func TestValidateImageLimits(t *testing.T) {
	// A valid PNG header claiming 10000x10000 is refused before any pixel
	// buffer is made.
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, image.NewGray(image.Rect(0, 0, 1, 1))))
	b := buf.Bytes()
	binary.BigEndian.PutUint32(b[16:], 10000)
	binary.BigEndian.PutUint32(b[20:], 10000)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	assert.ErrorContains(t, Validate(b), "megapixel")
}

func TestValidateWebMLiveRecording(t *testing.T) {
	// Segment and Clusters of unknown size, as MediaRecorder writes them.
	block := ebml(mkvSimpleID, []byte{0x81, 0, 0, 0x80, 1, 2})
	live := cat(
		ebml(ebmlHeaderID, ebml(ebmlDocTypeID, []byte("webm"))),
		ebmlUnknown(mkvSegmentID,
			ebml(mkvTracksID, ebml(mkvTrackID, ebml(mkvTrackTypeID, []byte{2}))),
			ebmlUnknown(mkvClusterID, ebml(mkvTimecodeID, []byte{0}), block),
			ebmlUnknown(mkvClusterID, ebml(mkvTimecodeID, []byte{0x03, 0xe8}), block),
		),
	)
	for range 20 {
		live = cat(live, ebmlUnknown(mkvClusterID, ebml(mkvTimecodeID, []byte{0x07, 0xd0}), block))
	}
	require.NoError(t, Validate(live))
	assert.ErrorContains(t, Validate(live[:len(live)-3]), "truncated")
}
