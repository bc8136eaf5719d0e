// Package mediatest builds hostile files for tests of the reference
// server's validators: images a few hundred KB long whose headers announce
// tens of megapixels of valid pixels, so that a decoder that trusts them
// allocates hundreds of MB, and audio whose header makes a few bytes last
// for seconds.
//
// Every image decodes with the standard library (or golang.org/x/image for
// WebP) to an all-zero picture of the size announced; nothing here is
// corrupt, only large.
package mediatest

import (
	"bytes"
	"compress/lzw"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/bits"
	"time"
)

// PNG colour types, as the IHDR chunk codes them.
const (
	Gray      = 0
	RGB       = 2
	GrayAlpha = 4
	RGBA      = 6
)

// PNG returns a width x height PNG of colour type colorType and bit depth
// depth, Adam7-interlaced if interlaced, whose pixels are all zero. Its
// zlib stream packs the rows (up to 8 bytes a pixel) about 800 to one.
func PNG(width, height int, colorType, depth byte, interlaced bool) []byte {
	channels := map[byte]int{Gray: 1, RGB: 3, GrayAlpha: 2, RGBA: 4}[colorType]
	bpp := channels * int(depth)
	raw := int64(0)
	if interlaced {
		for _, p := range adam7 {
			w := (width - p.x + p.dx - 1) / p.dx
			h := (height - p.y + p.dy - 1) / p.dy
			if w > 0 && h > 0 {
				raw += int64(h) * (1 + (int64(w)*int64(bpp)+7)/8)
			}
		}
	} else {
		raw = int64(height) * (1 + (int64(width)*int64(bpp)+7)/8)
	}
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	if _, err := io.CopyN(zw, zeros{}, raw); err != nil {
		panic(err)
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(width))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(height))
	ilace := byte(0)
	if interlaced {
		ilace = 1
	}
	ihdr = append(ihdr, depth, colorType, 0, 0, ilace)
	out := []byte("\x89PNG\r\n\x1a\n")
	out = pngChunk(out, "IHDR", ihdr)
	out = pngChunk(out, "IDAT", z.Bytes())
	return pngChunk(out, "IEND", nil)
}

// adam7 lists the offsets and steps of the seven passes of an interlaced
// PNG.
var adam7 = []struct{ x, y, dx, dy int }{
	{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2},
}

func pngChunk(out []byte, typ string, data []byte) []byte {
	out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
	start := len(out)
	out = append(out, typ...)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[start:]))
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// ProgressiveJPEG returns a width x height progressive JPEG, three
// components sampled 4:4:4, every coefficient zero: a DC scan, a DC
// refinement, then per component a spectral scan and an AC refinement made
// of end-of-band runs. image/jpeg keeps 256 bytes of coefficients for every
// block of a progressive image, 12 bytes a pixel here, on top of the 3 of
// the picture; the file holds about one bit per block.
func ProgressiveJPEG(width, height int) []byte {
	return ProgressiveJPEGScans(width, height, 1)
}

// ProgressiveJPEGScans is ProgressiveJPEG with each component's AC
// refinement scan repeated refinements times. Each repetition is a few
// dozen bytes, and a decoder goes through every block of the component
// again.
func ProgressiveJPEGScans(width, height, refinements int) []byte {
	out := []byte{0xff, 0xd8}
	// One quantization table of ones.
	dqt := append([]byte{0}, bytes.Repeat([]byte{1}, 64)...)
	out = jpegSegment(out, 0xdb, dqt)
	sof := []byte{8, byte(height >> 8), byte(height), byte(width >> 8), byte(width), 3}
	for id := byte(1); id <= 3; id++ {
		sof = append(sof, id, 0x11, 0)
	}
	out = jpegSegment(out, 0xc2, sof)
	// The DC table has one code, "0", for a difference of 0; the AC table
	// codes the end-of-band runs EOBRUN0 to EOBRUN14 on four bits each.
	dc := make([]byte, 17)
	dc[1] = 1
	out = jpegSegment(out, 0xc4, append(dc, 0x00))
	ac := make([]byte, 17)
	ac[0], ac[4] = 0x10, 15
	for k := range byte(15) {
		ac = append(ac, k<<4)
	}
	out = jpegSegment(out, 0xc4, ac)

	blocks := ((width + 7) / 8) * ((height + 7) / 8)
	// DC first scan, all components interleaved: one zero bit a block.
	out = jpegSegment(out, 0xda, []byte{3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 0, 0x01})
	var bw jpegBits
	for range 3 * blocks {
		bw.put(0, 1)
	}
	out = append(out, bw.flush()...)
	// DC refinement: one correction bit a block.
	out = jpegSegment(out, 0xda, []byte{3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 0, 0x10})
	for range 3 * blocks {
		bw.put(0, 1)
	}
	out = append(out, bw.flush()...)
	approx := []byte{0x01} // the first AC scan, then its refinements
	for range refinements {
		approx = append(approx, 0x10)
	}
	for id := byte(1); id <= 3; id++ {
		for _, approx := range approx {
			out = jpegSegment(out, 0xda, []byte{1, id, 0x00, 1, 63, approx})
			for left := blocks; left > 0; {
				run := min(left, 1<<15-1)
				k := bits.Len(uint(run)) - 1
				bw.put(uint32(k), 4)        // EOBRUNk: a run of 2^k to 2^(k+1)-1 blocks
				bw.put(uint32(run-1<<k), k) // the run less 2^k
				left -= run
			}
			out = append(out, bw.flush()...)
		}
	}
	return append(out, 0xff, 0xd9)
}

func jpegSegment(out []byte, marker byte, data []byte) []byte {
	out = append(out, 0xff, marker)
	out = binary.BigEndian.AppendUint16(out, uint16(len(data)+2))
	return append(out, data...)
}

// jpegBits writes entropy-coded bits, most significant first, stuffing a
// zero after each 0xff byte.
type jpegBits struct {
	acc   uint64
	n     int
	bytes []byte
}

func (w *jpegBits) put(v uint32, n int) {
	w.acc = w.acc<<n | uint64(v)&(1<<n-1)
	w.n += n
	for w.n >= 8 {
		c := byte(w.acc >> (w.n - 8))
		w.bytes = append(w.bytes, c)
		if c == 0xff {
			w.bytes = append(w.bytes, 0)
		}
		w.n -= 8
	}
}

// flush pads the last byte with ones and returns the scan's bytes.
func (w *jpegBits) flush() []byte {
	if w.n > 0 {
		w.put(1<<(8-w.n)-1, 8-w.n)
	}
	b := w.bytes
	*w = jpegBits{}
	return b
}

// GIF returns a width x height GIF of frames frames, each covering the
// whole screen in colour 0 of a two-colour table. image/gif's DecodeAll
// keeps every frame, a byte a pixel; the LZW data of a frame packs its
// pixels about 1400 to one.
func GIF(width, height, frames int) []byte {
	var lz bytes.Buffer
	zw := lzw.NewWriter(&lz, lzw.LSB, 2)
	if _, err := io.CopyN(zw, zeros{}, int64(width)*int64(height)); err != nil {
		panic(err)
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	var data []byte // the LZW bytes in sub-blocks of at most 255
	for rest := lz.Bytes(); len(rest) > 0; {
		n := min(len(rest), 255)
		data = append(append(data, byte(n)), rest[:n]...)
		rest = rest[n:]
	}
	data = append(data, 0)

	out := []byte("GIF89a")
	out = binary.LittleEndian.AppendUint16(out, uint16(width))
	out = binary.LittleEndian.AppendUint16(out, uint16(height))
	out = append(out, 0x80, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff) // a global table of two colours
	for range frames {
		out = append(out, 0x2c, 0, 0, 0, 0)
		out = binary.LittleEndian.AppendUint16(out, uint16(width))
		out = binary.LittleEndian.AppendUint16(out, uint16(height))
		out = append(out, 0, 2) // no local table; LZW minimum code size 2
		out = append(out, data...)
	}
	return append(out, 0x3b)
}

// LosslessWebP returns a width x height lossless (VP8L) WebP, each side at
// most 16384, every pixel transparent black. Its five prefix codes have one
// symbol each, so a pixel costs no bits at all: the file is 34 bytes
// whatever its size, and golang.org/x/image/webp decodes it into 4 bytes a
// pixel.
func LosslessWebP(width, height int) []byte {
	var w lsbBits
	w.put(0x2f, 8)
	w.put(uint32(width-1), 14)
	w.put(uint32(height-1), 14)
	w.put(0, 1) // alpha hint
	w.put(0, 3) // version
	w.put(0, 1) // no transform
	w.put(0, 1) // no colour cache
	w.put(0, 1) // no meta prefix codes
	for range 5 {
		w.put(1, 1) // a simple code
		w.put(0, 1) // of one symbol
		w.put(0, 1) // coded on one bit
		w.put(0, 1) // symbol 0
	}
	data := w.flush()
	out := []byte("RIFF")
	out = binary.LittleEndian.AppendUint32(out, uint32(4+8+len(data)+len(data)%2))
	out = append(out, "WEBPVP8L"...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(data)))
	out = append(out, data...)
	if len(data)%2 == 1 {
		out = append(out, 0)
	}
	return out
}

// lsbBits writes bits least significant first, as VP8L reads them.
type lsbBits struct {
	acc   uint64
	n     int
	bytes []byte
}

func (w *lsbBits) put(v uint32, n int) {
	w.acc |= uint64(v) & (1<<n - 1) << w.n
	w.n += n
	for w.n >= 8 {
		w.bytes = append(w.bytes, byte(w.acc))
		w.acc >>= 8
		w.n -= 8
	}
}

func (w *lsbBits) flush() []byte {
	if w.n > 0 {
		w.bytes = append(w.bytes, byte(w.acc))
	}
	return w.bytes
}

// WAV returns a PCM WAVE file of samples 8-bit mono samples at rate Hz:
// 44 bytes of header, then the samples (silence).
func WAV(rate uint32, samples int) []byte {
	out := []byte("RIFF")
	out = binary.LittleEndian.AppendUint32(out, uint32(36+samples+samples%2))
	out = append(out, "WAVEfmt "...)
	out = binary.LittleEndian.AppendUint32(out, 16)
	out = binary.LittleEndian.AppendUint16(out, 1) // PCM
	out = binary.LittleEndian.AppendUint16(out, 1) // mono
	out = binary.LittleEndian.AppendUint32(out, rate)
	out = binary.LittleEndian.AppendUint32(out, rate) // bytes a second
	out = binary.LittleEndian.AppendUint16(out, 1)    // block align
	out = binary.LittleEndian.AppendUint16(out, 8)    // bits a sample
	out = append(out, "data"...)
	out = binary.LittleEndian.AppendUint32(out, uint32(samples))
	out = append(out, bytes.Repeat([]byte{0x80}, samples)...)
	if samples%2 == 1 {
		out = append(out, 0)
	}
	return out
}

// OggVorbis returns an Ogg Vorbis stream at rate Hz whose last granule
// position claims d of audio: an identification page, a page of padding
// bytes, and an end-of-stream page. No packet is real audio.
func OggVorbis(rate uint32, d time.Duration, padding int) []byte {
	id := []byte("\x01vorbis\x00\x00\x00\x00\x01")
	id = binary.LittleEndian.AppendUint32(id, rate)
	id = append(id, make([]byte, 12)...) // bitrates
	id = append(id, 0xb8, 1)
	granule := uint64(d.Seconds() * float64(rate))
	return bytes.Join([][]byte{
		oggPage(0x02, 0, 0, id),
		oggPage(0, 1, 0, make([]byte, padding)),
		oggPage(0x04, 2, granule, []byte{0}),
	}, nil)
}

// oggPage builds one page of stream 7 holding body.
func oggPage(flags byte, seq uint32, granule uint64, body []byte) []byte {
	var segs []byte
	n := len(body)
	for ; n >= 255; n -= 255 {
		segs = append(segs, 255)
	}
	segs = append(segs, byte(n))
	p := append([]byte("OggS\x00"), flags)
	p = binary.LittleEndian.AppendUint64(p, granule)
	p = binary.LittleEndian.AppendUint32(p, 7)
	p = binary.LittleEndian.AppendUint32(p, seq)
	p = binary.LittleEndian.AppendUint32(p, 0) // CRC, below
	p = append(p, byte(len(segs)))
	p = append(append(p, segs...), body...)
	var crc uint32
	for _, c := range p {
		crc = crc<<8 ^ oggCRC[byte(crc>>24)^c]
	}
	binary.LittleEndian.PutUint32(p[22:], crc)
	return p
}

// oggCRC is the table of Ogg's CRC-32, polynomial 0x04c11db7.
var oggCRC = func() (t [256]uint32) {
	for i := range t {
		r := uint32(i) << 24
		for range 8 {
			if r&0x80000000 != 0 {
				r = r<<1 ^ 0x04c11db7
			} else {
				r <<= 1
			}
		}
		t[i] = r
	}
	return t
}()
