package media

import "encoding/binary"

// FLAC output: mono 16-bit at 16 kHz in blocks of a quarter second, each
// block one frame with one subframe: the second-order fixed predictor with
// Rice-coded residuals, which roughly halves a smooth tone, or verbatim
// where that is smaller.
const (
	flacRate  = 16000
	flacBlock = flacRate / 4
	// flacPartitions is the Rice partition order: 16 partitions of 250
	// samples follow the loudness of syllables and pauses.
	flacPartitions = 4
	flacOrder      = 2
)

// flacStreamInfoBlock returns the STREAMINFO metadata block (header and
// 34-byte body) for total samples, marked as the last metadata block.
func flacStreamInfoBlock(total int) []byte {
	block := min(flacBlock, max(total, 16))
	b := make([]byte, 4, 4+34)
	b[0] = 0x80 // last block, type 0 STREAMINFO
	b[3] = 34
	b = binary.BigEndian.AppendUint16(b, uint16(block)) // min block size
	b = binary.BigEndian.AppendUint16(b, uint16(block)) // max block size
	b = append(b, 0, 0, 0, 0, 0, 0)                     // frame sizes unknown
	// rate (20 bits), channels-1 (3), bits-1 (5), total samples (36)
	v := uint64(flacRate)<<44 | 0<<41 | 15<<36 | uint64(total)&(1<<36-1)
	b = binary.BigEndian.AppendUint64(b, v)
	return append(b, make([]byte, 16)...) // MD5 unknown
}

// encodeFLACFrames encodes samples as FLAC frames, one per block, and
// returns them concatenated with the size of each.
func encodeFLACFrames(samples []int16) (data []byte, sizes []int) {
	data = make([]byte, 0, len(samples)+16*(len(samples)/flacBlock+1))
	var w bitWriter
	residual := make([]uint32, flacBlock)
	for i, num := 0, 0; i < len(samples); i, num = i+flacBlock, num+1 {
		block := samples[i:min(i+flacBlock, len(samples))]
		start := len(data)
		data = appendFLACFrame(data, num, block, &w, residual)
		sizes = append(sizes, len(data)-start)
	}
	return data, sizes
}

// appendFLACFrame appends one frame: header, one subframe, and the CRC-16
// of the whole frame.
func appendFLACFrame(dst []byte, num int, block []int16, w *bitWriter, residual []uint32) []byte {
	start := len(dst)
	dst = append(dst, 0xff, 0xf8) // sync code, fixed block size
	// Block size read from the header end (16 bits), 16 kHz; mono, 16-bit.
	dst = append(dst, 0b0111_0101, 0b0000_1000)
	dst = appendUTF8Number(dst, uint32(num))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(block)-1))
	dst = append(dst, crc8(dst[start:]))

	w.reset()
	if !fixedSubframe(w, block, residual) {
		w.reset()
		w.u(8, 0b0_000001_0) // verbatim subframe, no wasted bits
		for _, s := range block {
			w.u(16, uint32(uint16(s)))
		}
	}
	w.padZeros()
	dst = append(dst, w.bytes()...)
	return binary.BigEndian.AppendUint16(dst, crc16(dst[start:]))
}

// fixedSubframe writes block as a FIXED subframe of order 2 with
// partitioned Rice residuals, and reports false when verbatim would be no
// larger (or the block is too short to predict).
func fixedSubframe(w *bitWriter, block []int16, residual []uint32) bool {
	n := len(block)
	parts := 1 << flacPartitions
	if n%parts != 0 || n/parts <= flacOrder {
		parts = 1
	}
	if n <= flacOrder {
		return false
	}
	// Residuals of x[i] - 2x[i-1] + x[i-2], zigzag-mapped to unsigned.
	res := residual[:n]
	for i := flacOrder; i < n; i++ {
		e := int32(block[i]) - 2*int32(block[i-1]) + int32(block[i-2])
		res[i] = uint32(e<<1) ^ uint32(e>>31)
	}
	// Choose each partition's Rice parameter by trying them all.
	var ks [1 << flacPartitions]uint
	total := 8 + 16*flacOrder + 6
	for p := range parts {
		from, to := p*n/parts, (p+1)*n/parts
		from = max(from, flacOrder)
		best := -1
		for k := uint(0); k < 15; k++ {
			bits := (to - from) * int(k+1)
			for _, u := range res[from:to] {
				bits += int(u >> k)
			}
			if best < 0 || bits < best {
				best, ks[p] = bits, k
			}
		}
		total += 4 + best
	}
	if total >= 8+16*n {
		return false
	}
	w.u(8, 0b0_001000_0|flacOrder<<1) // FIXED, order 2, no wasted bits
	for _, s := range block[:flacOrder] {
		w.u(16, uint32(uint16(s))) // warm-up samples
	}
	w.u(2, 0) // Rice coding with 4-bit parameters
	w.u(4, uint32(bitsLen(parts)-1))
	for p := range parts {
		from, to := max(p*n/parts, flacOrder), (p+1)*n/parts
		k := ks[p]
		w.u(4, uint32(k))
		for _, u := range res[from:to] {
			for q := u >> k; q > 0; q -= min(q, 24) {
				w.u(uint(min(q, 24)), 0) // the quotient in unary: zeros...
			}
			w.u(k+1, 1<<k|u&(1<<k-1)) // ...a one, then the k low bits
		}
	}
	return true
}

// bitsLen is the bit length of a power of two (1 -> 1, 16 -> 5).
func bitsLen(v int) int {
	n := 0
	for ; v > 0; v >>= 1 {
		n++
	}
	return n
}

// appendUTF8Number writes a frame number the way UTF-8 writes a code point.
func appendUTF8Number(dst []byte, n uint32) []byte {
	switch {
	case n < 0x80:
		return append(dst, byte(n))
	case n < 0x800:
		return append(dst, 0xc0|byte(n>>6), 0x80|byte(n&0x3f))
	case n < 0x10000:
		return append(dst, 0xe0|byte(n>>12), 0x80|byte(n>>6&0x3f), 0x80|byte(n&0x3f))
	default: // up to 2^21, far more frames than MaxMP4Duration has
		return append(dst, 0xf0|byte(n>>18), 0x80|byte(n>>12&0x3f), 0x80|byte(n>>6&0x3f), 0x80|byte(n&0x3f))
	}
}

// crc16 is FLAC's frame checksum over b (crc16Table is validation's).
func crc16(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c = c<<8 ^ crc16Table[byte(c>>8)^x]
	}
	return c
}
