package media

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// This file is the one FLAC reader: the metadata walk that [ProbeAudio]
// reads the stream's rate and length from, and the frame walk [Validate]
// adds. github.com/mewkiz/flac was weighed and not taken: it decodes every
// sample of every frame into a fresh slice of the size the frame header
// declares (65,536 samples a channel for a few bytes of constant subframe),
// work and memory in proportion to declared sizes that this package does not
// spend, and it refuses STREAMINFO blocks this reader accepts. The encoder
// for the server's own tracks is flacenc.go.

// flacStreamInfo reads sample rate and total samples from a STREAMINFO
// block body (34 bytes: they sit in the 64 bits at offset 10).
func flacStreamInfo(si []byte) (rate, total uint64, err error) {
	if len(si) < 18 {
		return 0, 0, errors.New("media: short FLAC STREAMINFO")
	}
	v := binary.BigEndian.Uint64(si[10:])
	return v >> 44, v & (1<<36 - 1), nil
}

// flacMeta walks a native FLAC file's metadata blocks, which must start
// with STREAMINFO, and returns its sample rate and total samples, and
// where the frames start.
func flacMeta(b []byte) (rate, total uint64, framesAt int, err error) {
	if len(b) < 8 || string(b[:4]) != "fLaC" {
		return 0, 0, 0, errors.New("not a FLAC file")
	}
	pos := 4 // after "fLaC"
	for last := false; !last; {
		if pos+4 > len(b) {
			return 0, 0, 0, errTruncated
		}
		last = b[pos]&0x80 != 0
		typ := b[pos] & 0x7f
		n := int(b[pos+1])<<16 | int(b[pos+2])<<8 | int(b[pos+3])
		pos += 4
		if pos+n > len(b) {
			return 0, 0, 0, errTruncated
		}
		switch {
		case typ == 127:
			return 0, 0, 0, errors.New("an invalid metadata block type")
		case pos == 8 && (typ != 0 || n != 34):
			return 0, 0, 0, errors.New("STREAMINFO is not the first metadata block")
		case pos == 8:
			rate, total, _ = flacStreamInfo(b[pos : pos+n])
		}
		pos += n
	}
	if total == 0 {
		return 0, 0, 0, errors.New("the total sample count is unknown or zero")
	}
	if rate == 0 {
		return 0, 0, 0, errors.New("the sample rate is zero")
	}
	return rate, total, pos, nil
}

// flacAudio reads a native FLAC file's duration and sample rate from
// STREAMINFO.
func flacAudio(b []byte) (AudioInfo, error) {
	rate, total, _, err := flacMeta(b)
	if err != nil {
		return AudioInfo{}, fmt.Errorf("media: FLAC: %w", err)
	}
	d, err := ticksToDuration(total, rate)
	return AudioInfo{Duration: d, SampleRate: int(rate)}, err
}

// validateFLAC walks the metadata blocks and then every frame, each
// checked by its header CRC-8 and its CRC-16 footer, and compares the
// samples found with the total STREAMINFO announces.
func validateFLAC(b []byte) error {
	_, total, pos, err := flacMeta(b)
	if err != nil {
		return err
	}
	if b = trimID3v1(b); pos >= len(b) {
		return errors.New("no audio frames")
	}
	hdr, ok := parseFLACFrame(b[pos:])
	if !ok {
		return fmt.Errorf("no audio frame after the metadata (byte %d)", pos)
	}
	var samples uint64
	for pos < len(b) {
		end, next, ok := flacFrameEnd(b, pos, hdr)
		if !ok {
			return fmt.Errorf("the frame at byte %d is cut short or corrupt", pos)
		}
		samples += uint64(hdr.blockSize)
		pos, hdr = end, next
	}
	if samples != total {
		return fmt.Errorf("%d of the %d samples STREAMINFO announces: %w", samples, total, errTruncated)
	}
	return nil
}

// trimID3v1 drops an ID3v1 tag some taggers append to any audio file.
func trimID3v1(b []byte) []byte {
	if n := len(b); n >= 128 && string(b[n-128:n-125]) == "TAG" {
		return b[:n-128]
	}
	return b
}

// flacFrame is what the walk needs from a FLAC frame header.
type flacFrame struct {
	blockSize int
	variable  bool   // variable block size: number counts samples, not frames
	number    uint64 // frame or sample number
}

// parseFLACFrame decodes and checks the frame header at the start of b.
func parseFLACFrame(b []byte) (flacFrame, bool) {
	if len(b) < 6 || b[0] != 0xff || b[1]&0xfe != 0xf8 {
		return flacFrame{}, false
	}
	bs, sr := b[2]>>4, b[2]&0x0f
	ch, ss := b[3]>>4, b[3]>>1&7
	if bs == 0 || sr == 15 || ch > 10 || ss == 3 || b[3]&1 != 0 {
		return flacFrame{}, false
	}
	f := flacFrame{variable: b[1]&1 != 0}
	// The frame or sample number, coded like UTF-8 on up to 7 bytes.
	n := 1
	switch c := b[4]; {
	case c < 0x80:
		f.number = uint64(c)
	case c >= 0xc0 && c < 0xfe:
		for mask := byte(0x40); c&mask != 0; mask >>= 1 {
			n++
		}
		f.number = uint64(c & (0x7f >> n))
	default:
		return flacFrame{}, false
	}
	pos := 4 + n
	if pos > len(b) {
		return flacFrame{}, false
	}
	for _, c := range b[5:pos] {
		if c&0xc0 != 0x80 {
			return flacFrame{}, false
		}
		f.number = f.number<<6 | uint64(c&0x3f)
	}
	switch {
	case bs == 1:
		f.blockSize = 192
	case bs <= 5:
		f.blockSize = 576 << (bs - 2)
	case bs == 6 && pos+1 <= len(b):
		f.blockSize = int(b[pos]) + 1
		pos++
	case bs == 7 && pos+2 <= len(b):
		f.blockSize = int(binary.BigEndian.Uint16(b[pos:])) + 1
		pos += 2
	case bs >= 8:
		f.blockSize = 256 << (bs - 8)
	default:
		return flacFrame{}, false
	}
	switch sr {
	case 12:
		pos++
	case 13, 14:
		pos += 2
	}
	if pos+1 > len(b) || crc8(b[:pos]) != b[pos] {
		return flacFrame{}, false
	}
	return f, true
}

// flacFrameEnd finds where the frame at pos ends: at the end of the file,
// or where the next frame of the same stream starts, whichever comes first
// with a CRC-16 footer matching the bytes before it. Frame lengths are not
// in the header, so the candidates are scanned; the CRC is kept running,
// so the scan is linear.
func flacFrameEnd(b []byte, pos int, cur flacFrame) (end int, next flacFrame, ok bool) {
	var crc uint16
	j := pos
	for e := pos + 7; e <= len(b); e++ { // header, a subframe byte, footer
		for ; j < e-2; j++ {
			crc = crc<<8 ^ crc16Table[byte(crc>>8)^b[j]]
		}
		if crc != binary.BigEndian.Uint16(b[e-2:]) {
			continue
		}
		if e == len(b) {
			return e, flacFrame{}, true
		}
		if b[e] != 0xff {
			continue
		}
		n, ok := parseFLACFrame(b[e:])
		if ok && n.variable == cur.variable && (n.variable || n.number == cur.number+1) {
			return e, n, true
		}
	}
	return 0, flacFrame{}, false
}

// crc8 is FLAC's header CRC: polynomial 0x07, initial value 0.
func crc8(b []byte) byte {
	var crc byte
	for _, c := range b {
		crc ^= c
		for range 8 {
			if crc&0x80 != 0 {
				crc = crc<<1 ^ 0x07
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// crc16Table is the table of FLAC's frame CRC: polynomial 0x8005, not
// reflected, initial value 0.
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		r := uint16(i) << 8
		for range 8 {
			if r&0x8000 != 0 {
				r = r<<1 ^ 0x8005
			} else {
				r <<= 1
			}
		}
		t[i] = r
	}
	return t
}()
