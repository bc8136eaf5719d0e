package media

import (
	"encoding/binary"
	"fmt"
)

// validateOgg checks every page to the end of the file: sizes, CRC,
// version, page sequence per stream, and that the first stream ends with
// its end-of-stream page, which a cut file lacks.
func validateOgg(b []byte) error {
	type stream struct {
		seq uint32
		eos bool
	}
	streams := map[uint32]*stream{}
	var first uint32
	for pos := 0; pos < len(b); {
		page, ok := parseOggPage(b[pos:])
		if !ok {
			if len(b)-pos < 27 || string(b[pos:pos+4]) == "OggS" {
				return errTruncated
			}
			return fmt.Errorf("not an Ogg page at byte %d", pos)
		}
		raw := b[pos : pos+page.size]
		if binary.LittleEndian.Uint32(raw[22:]) != oggCRC(raw) {
			return fmt.Errorf("the page at byte %d fails its CRC", pos)
		}
		flags, seq := raw[5], binary.LittleEndian.Uint32(raw[18:])
		st, seen := streams[page.serial]
		switch {
		case !seen && flags&0x02 == 0:
			return fmt.Errorf("stream %d starts without a beginning-of-stream page", page.serial)
		case !seen:
			if pos == 0 {
				first = page.serial
			}
			st = &stream{seq: seq}
			streams[page.serial] = st
		case st.eos:
			return fmt.Errorf("stream %d goes on after its end-of-stream page", page.serial)
		case seq != st.seq+1:
			return fmt.Errorf("stream %d skips from page %d to %d", page.serial, st.seq, seq)
		default:
			st.seq = seq
		}
		st.eos = flags&0x04 != 0
		pos += page.size
	}
	if st := streams[first]; st == nil || !st.eos {
		return fmt.Errorf("no end-of-stream page: %w", errTruncated)
	}
	_, err := oggAudio(b)
	return err
}

// oggCRCTable is the table of Ogg's CRC-32: polynomial 0x04c11db7, not
// reflected, initial value 0.
var oggCRCTable = func() (t [256]uint32) {
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

// oggCRC computes a page's checksum with its CRC field taken as zero.
func oggCRC(page []byte) uint32 {
	var crc uint32
	for i, c := range page {
		if i >= 22 && i < 26 {
			c = 0
		}
		crc = crc<<8 ^ oggCRCTable[byte(crc>>24)^c]
	}
	return crc
}
