package media

import (
	"encoding/binary"
	"time"
)

// MaxMP4Duration bounds MP4 output; longer requests are clamped. The movie
// header holds milliseconds in 32 bits, so the real ceiling is ~49 days.
const MaxMP4Duration = 24 * time.Hour

// mp4Timescale is the clock of the movie and the media: milliseconds.
const mp4Timescale = 1000

// MP4 returns a small, well-formed ISO BMFF file (brand isom) whose movie and
// single video track last d (rounded to the millisecond, clamped to
// 0..MaxMP4Duration) at width x height (clamped to 1..MaxImageSide).
//
// The layout is ftyp, moov (mvhd; trak with tkhd and mdia: mdhd, hdlr vide,
// minf with vmhd, dinf/dref and stbl: stsd holding an avc1 entry, stts, stsc,
// stsz, stco) and mdat holding one sample. Parsers read the duration and
// size from it; the sample bytes are filler, not a decodable H.264 frame, so
// players show nothing.
func MP4(d time.Duration, width, height int) []byte {
	d = min(max(d, 0), MaxMP4Duration)
	ms := uint32((d + time.Millisecond/2) / time.Millisecond)
	width, height = clampSide(width), clampSide(height)
	sample := []byte("mediagen-sample!")

	ftyp := box("ftyp", []byte("isom"), u32(0x200), []byte("isomiso2avc1mp41"))
	// moov's size does not depend on the chunk offset value, so build it
	// once to learn its size, then again with the real mdat offset.
	moov := mp4Moov(ms, width, height, len(sample), 0)
	offset := uint32(len(ftyp) + len(moov) + 8)
	moov = mp4Moov(ms, width, height, len(sample), offset)
	mdat := box("mdat", sample)

	out := make([]byte, 0, len(ftyp)+len(moov)+len(mdat))
	out = append(out, ftyp...)
	out = append(out, moov...)
	return append(out, mdat...)
}

// mp4Moov builds the movie box for a one-sample video track.
func mp4Moov(ms uint32, width, height, sampleSize int, chunkOffset uint32) []byte {
	mvhd := fullBox("mvhd", 0, 0,
		u32(0), u32(0), // creation and modification time: fixed for determinism
		u32(mp4Timescale), u32(ms),
		u32(0x00010000), u16(0x0100), make([]byte, 10), // rate 1.0, volume 1.0, reserved
		identityMatrix(),
		make([]byte, 24), // pre_defined
		u32(2),           // next_track_ID
	)
	tkhd := fullBox("tkhd", 0, 3, // flags: track enabled and in movie
		u32(0), u32(0), u32(1), u32(0), u32(ms),
		make([]byte, 8), u16(0), u16(0), u16(0), u16(0), // reserved, layer, group, volume, reserved
		identityMatrix(),
		u32(uint32(width)<<16), u32(uint32(height)<<16), // 16.16 fixed point
	)
	mdhd := fullBox("mdhd", 0, 0, u32(0), u32(0), u32(mp4Timescale), u32(ms), u16(0x55c4), u16(0)) // language "und"
	hdlr := fullBox("hdlr", 0, 0, u32(0), []byte("vide"), make([]byte, 12), []byte("VideoHandler\x00"))
	vmhd := fullBox("vmhd", 0, 1, make([]byte, 8))
	dinf := box("dinf", fullBox("dref", 0, 0, u32(1), fullBox("url ", 0, 1))) // flag 1: data in this file
	avc1 := box("avc1",
		make([]byte, 6), u16(1), // reserved, data_reference_index
		make([]byte, 16), // pre_defined and reserved
		u16(uint16(width)), u16(uint16(height)),
		u32(0x00480000), u32(0x00480000), u32(0), u16(1), // 72 dpi, reserved, frame_count
		make([]byte, 32), u16(0x0018), u16(0xffff), // compressorname, depth, pre_defined -1
	)
	stbl := box("stbl",
		fullBox("stsd", 0, 0, u32(1), avc1),
		fullBox("stts", 0, 0, u32(1), u32(1), u32(ms)),
		fullBox("stsc", 0, 0, u32(1), u32(1), u32(1), u32(1)),
		fullBox("stsz", 0, 0, u32(0), u32(1), u32(uint32(sampleSize))),
		fullBox("stco", 0, 0, u32(1), u32(chunkOffset)),
	)
	minf := box("minf", vmhd, dinf, stbl)
	trak := box("trak", tkhd, box("mdia", mdhd, hdlr, minf))
	return box("moov", mvhd, trak)
}

// box assembles a plain box from its payload parts.
func box(typ string, parts ...[]byte) []byte {
	n := 8
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 8, n)
	binary.BigEndian.PutUint32(out, uint32(n))
	copy(out[4:], typ)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// fullBox assembles a box that starts with a version byte and 24-bit flags.
func fullBox(typ string, version byte, flags uint32, parts ...[]byte) []byte {
	vf := u32(uint32(version)<<24 | flags&0xffffff)
	return box(typ, append([][]byte{vf}, parts...)...)
}

// identityMatrix is the unity transformation matrix of mvhd and tkhd.
func identityMatrix() []byte {
	m := make([]byte, 36)
	binary.BigEndian.PutUint32(m[0:], 0x00010000)
	binary.BigEndian.PutUint32(m[16:], 0x00010000)
	binary.BigEndian.PutUint32(m[32:], 0x40000000)
	return m
}

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func u16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
