package media

import "encoding/binary"

// mp4Timescale is the movie clock: milliseconds.
const mp4Timescale = 1000

// muxTrack is one track's samples and sample entry, ready to mux.
type muxTrack struct {
	handler       string // "vide" or "soun"
	timescale     uint32
	width, height int
	entry         []byte   // the stsd sample entry box
	data          []byte   // the samples, back to back
	sizes         []uint32 // of each sample
	deltas        []uint32 // duration of each sample, in timescale ticks
	sync          []uint32 // 1-based key samples; nil when all are
	ticks         uint64   // total duration

	// Filled by layout: the chunks of one second, as sample counts and
	// file offsets.
	chunkLen []uint32
	chunkOff []uint32
}

// addSample records the next sample's size and duration.
func (t *muxTrack) addSample(size int, delta uint32) {
	t.sizes = append(t.sizes, uint32(size))
	t.deltas = append(t.deltas, delta)
	t.ticks += uint64(delta)
}

// muxMP4 writes ftyp, moov and one mdat whose chunks alternate between
// the tracks a second at a time, so a player streaming the file finds
// sound and pictures together.
func muxMP4(tracks []*muxTrack) []byte {
	ftyp := box("ftyp", []byte("isom"), u32(0x200), []byte("isomiso2avc1mp41"))
	// moov's size does not depend on the offsets it holds: lay out once to
	// learn it, then again with the real start of the mdat payload.
	layout(tracks, 0)
	moov := mp4Moov(tracks)
	start := len(ftyp) + len(moov) + 8
	order := layout(tracks, uint32(start))
	moov = mp4Moov(tracks)

	size := 8
	for _, t := range tracks {
		size += len(t.data)
	}
	out := make([]byte, 0, len(ftyp)+len(moov)+size)
	out = append(out, ftyp...)
	out = append(out, moov...)
	out = binary.BigEndian.AppendUint32(out, uint32(size))
	out = append(out, "mdat"...)
	for _, piece := range order {
		out = append(out, piece...)
	}
	return out
}

// layout splits each track into one-second chunks, places them in the
// mdat in time order starting at offset base, and returns the chunk bytes
// in file order.
func layout(tracks []*muxTrack, base uint32) [][]byte {
	type cursor struct{ sample, pos int }
	cur := make([]cursor, len(tracks))
	for _, t := range tracks {
		t.chunkLen, t.chunkOff = t.chunkLen[:0], t.chunkOff[:0]
	}
	var order [][]byte
	off := base
	for sec := uint64(1); ; sec++ {
		done := true
		for k, t := range tracks {
			c := &cur[k]
			if c.sample == len(t.sizes) {
				continue
			}
			done = false
			first, from := c.sample, c.pos
			// Samples that start before the end of this second.
			for c.sample < len(t.sizes) && startTicks(t, c.sample) < sec*uint64(t.timescale) {
				c.pos += int(t.sizes[c.sample])
				c.sample++
			}
			if c.sample == first {
				continue
			}
			t.chunkLen = append(t.chunkLen, uint32(c.sample-first))
			t.chunkOff = append(t.chunkOff, off)
			order = append(order, t.data[from:c.pos])
			off += uint32(c.pos - from)
		}
		if done {
			return order
		}
	}
}

// startTicks is when sample i starts. Samples of a track have one length
// but the last, so this is a product, not a sum.
func startTicks(t *muxTrack, i int) uint64 {
	if i == 0 {
		return 0
	}
	return uint64(i) * uint64(t.deltas[0])
}

// mp4Moov builds the movie box; the movie lasts as long as its longest
// track, in milliseconds.
func mp4Moov(tracks []*muxTrack) []byte {
	var ms uint32
	for _, t := range tracks {
		ms = max(ms, t.ms())
	}
	mvhd := fullBox("mvhd", 0, 0,
		u32(0), u32(0), // creation and modification time: fixed for determinism
		u32(mp4Timescale), u32(ms),
		u32(0x00010000), u16(0x0100), make([]byte, 10), // rate 1.0, volume 1.0, reserved
		identityMatrix(),
		make([]byte, 24), // pre_defined
		u32(uint32(len(tracks)+1)),
	)
	parts := [][]byte{mvhd}
	for i, t := range tracks {
		parts = append(parts, t.trak(uint32(i+1)))
	}
	return box("moov", parts...)
}

// ms is the track's duration in the movie clock, rounded.
func (t *muxTrack) ms() uint32 {
	return uint32((t.ticks*mp4Timescale + uint64(t.timescale)/2) / uint64(t.timescale))
}

// trak builds the track box.
func (t *muxTrack) trak(id uint32) []byte {
	volume, handlerName := uint16(0), "VideoHandler\x00"
	mediaHeader := fullBox("vmhd", 0, 1, make([]byte, 8))
	if t.handler == "soun" {
		volume, handlerName = 0x0100, "SoundHandler\x00"
		mediaHeader = fullBox("smhd", 0, 0, make([]byte, 4))
	}
	tkhd := fullBox("tkhd", 0, 3, // flags: track enabled and in movie
		u32(0), u32(0), u32(id), u32(0), u32(t.ms()),
		make([]byte, 8), u16(0), u16(0), u16(volume), u16(0), // reserved, layer, group, volume, reserved
		identityMatrix(),
		u32(uint32(t.width)<<16), u32(uint32(t.height)<<16), // 16.16 fixed point
	)
	mdhd := fullBox("mdhd", 0, 0, u32(0), u32(0), u32(t.timescale), u32(uint32(t.ticks)), u16(0x55c4), u16(0)) // language "und"
	hdlr := fullBox("hdlr", 0, 0, u32(0), []byte(t.handler), make([]byte, 12), []byte(handlerName))
	dinf := box("dinf", fullBox("dref", 0, 0, u32(1), fullBox("url ", 0, 1))) // flag 1: data in this file
	stbl := [][]byte{fullBox("stsd", 0, 0, u32(1), t.entry), t.stts()}
	if t.sync != nil {
		stbl = append(stbl, fullBox("stss", 0, 0, u32(uint32(len(t.sync))), u32s(t.sync)))
	}
	stbl = append(stbl, t.stsc(),
		fullBox("stsz", 0, 0, u32(0), u32(uint32(len(t.sizes))), u32s(t.sizes)),
		fullBox("stco", 0, 0, u32(uint32(len(t.chunkOff))), u32s(t.chunkOff)),
	)
	minf := box("minf", mediaHeader, dinf, box("stbl", stbl...))
	return box("trak", tkhd, box("mdia", mdhd, hdlr, minf))
}

// stts run-length codes the sample durations.
func (t *muxTrack) stts() []byte {
	var runs []uint32
	for i, d := range t.deltas {
		if i > 0 && d == runs[len(runs)-1] {
			runs[len(runs)-2]++
			continue
		}
		runs = append(runs, 1, d)
	}
	return fullBox("stts", 0, 0, u32(uint32(len(runs)/2)), u32s(runs))
}

// stsc run-length codes the samples per chunk.
func (t *muxTrack) stsc() []byte {
	var runs []uint32
	for i, n := range t.chunkLen {
		if i > 0 && n == runs[len(runs)-2] {
			continue
		}
		runs = append(runs, uint32(i+1), n, 1) // first chunk, samples, entry 1
	}
	return fullBox("stsc", 0, 0, u32(uint32(len(runs)/3)), u32s(runs))
}

// u32s writes big-endian 32-bit values.
func u32s(v []uint32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.BigEndian.AppendUint32(b, x)
	}
	return b
}

// avc1Entry is the H.264 sample entry, with the parameter sets in avcC.
func avc1Entry(width, height int, sps, pps []byte) []byte {
	spsNAL := appendNAL(nil, 3, 7, sps)[4:] // without the length prefix
	ppsNAL := appendNAL(nil, 3, 8, pps)[4:]
	avcC := box("avcC",
		[]byte{1, spsNAL[1], spsNAL[2], spsNAL[3], 0xff, 0xe1}, // version, profile, compat, level, 4-byte lengths, one SPS
		u16(uint16(len(spsNAL))), spsNAL,
		[]byte{1}, u16(uint16(len(ppsNAL))), ppsNAL,
	)
	return box("avc1",
		make([]byte, 6), u16(1), // reserved, data_reference_index
		make([]byte, 16), // pre_defined and reserved
		u16(uint16(width)), u16(uint16(height)),
		u32(0x00480000), u32(0x00480000), u32(0), u16(1), // 72 dpi, reserved, frame_count
		make([]byte, 32), u16(0x0018), u16(0xffff), // compressorname, depth, pre_defined -1
		avcC,
	)
}

// flacEntry is the FLAC sample entry (the FLAC-in-ISOBMFF mapping): an
// audio sample entry whose dfLa box carries the STREAMINFO block.
func flacEntry(total int) []byte {
	return box("fLaC",
		make([]byte, 6), u16(1), // reserved, data_reference_index
		make([]byte, 8),                 // reserved
		u16(1), u16(16), u16(0), u16(0), // channels, sample size, pre_defined, reserved
		u32(flacRate<<16), // 16.16 fixed point
		fullBox("dfLa", 0, 0, flacStreamInfoBlock(total)),
	)
}
