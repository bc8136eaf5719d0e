package media

import "encoding/binary"

// FLAC output: mono 16-bit at 16 kHz in blocks of a quarter second, each
// block one frame with a verbatim subframe. Verbatim costs 32 KB a second
// and needs no predictor, which keeps the encoder a few lines long.
const (
	flacRate  = 16000
	flacBlock = flacRate / 4
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

// encodeFLACFrames encodes samples as FLAC frames, one per block, and returns
// them concatenated with the size of each.
func encodeFLACFrames(samples []int16) (data []byte, sizes []int) {
	data = make([]byte, 0, 2*len(samples)+16*(len(samples)/flacBlock+1))
	for i, num := 0, 0; i < len(samples); i, num = i+flacBlock, num+1 {
		block := samples[i:min(i+flacBlock, len(samples))]
		start := len(data)
		data = appendFLACFrame(data, num, block)
		sizes = append(sizes, len(data)-start)
	}
	return data, sizes
}

// appendFLACFrame appends one frame: header, a verbatim subframe, and the
// CRC-16 of the whole frame.
func appendFLACFrame(dst []byte, num int, block []int16) []byte {
	start := len(dst)
	dst = append(dst, 0xff, 0xf8) // sync code, fixed block size
	// Block size read from the header end (16 bits), 16 kHz; mono, 16-bit.
	dst = append(dst, 0b0111_0101, 0b0000_1000)
	dst = appendUTF8Number(dst, uint32(num))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(block)-1))
	dst = append(dst, crc8(dst[start:]))
	dst = append(dst, 0b0_000001_0) // verbatim subframe, no wasted bits
	for _, s := range block {
		dst = binary.BigEndian.AppendUint16(dst, uint16(s))
	}
	return binary.BigEndian.AppendUint16(dst, crc16(dst[start:]))
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
