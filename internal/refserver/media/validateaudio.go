package media

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// validateWAV checks that every chunk, the data chunk above all, lies
// within the file, and that the duration is known.
func validateWAV(b []byte) error {
	if len(b) < 12 {
		return errTruncated
	}
	riffSize := binary.LittleEndian.Uint32(b[4:])
	streamed := false // a streaming writer's unknown sizes: nothing to check against
	haveFmt := false
	for body := b[12:]; len(body) > 1; { // a lone last byte is padding
		if len(body) < 8 {
			return errTruncated
		}
		id, size := string(body[:4]), uint64(binary.LittleEndian.Uint32(body[4:]))
		switch {
		case id == "fmt ":
			haveFmt = true
		case id == "data" && !haveFmt:
			return errors.New("the data chunk comes before the fmt chunk")
		case id == "data" && size == 0xffffffff:
			streamed = true
			size = uint64(len(body)) - 8
		}
		if 8+size > uint64(len(body)) {
			return errTruncated
		}
		body = body[min(8+size+size%2, uint64(len(body))):]
	}
	if !streamed && riffSize != 0xffffffff && 8+uint64(riffSize) > uint64(len(b)) {
		return errTruncated
	}
	_, err := wavAudio(b)
	return err
}

// validateMP3 walks the MPEG audio frames from the first to the end of the
// file, allowing ID3 and APE tags around them.
func validateMP3(b []byte) error {
	if b = skipID3v2(b); b == nil {
		return errTruncated // the ID3v2 tag runs past the end
	}
	b = trimMP3Tags(b)
	start, first, ok := mp3Start(b)
	if !ok {
		return errors.New("no MPEG audio frames")
	}
	b = b[start:]
	count, hasCount, isTag := vbrFrameCount(b[:first.length], first)
	frames := 0
	for pos := 0; pos < len(b); {
		f, ok := parseMPEGFrame(b[pos:])
		switch {
		case !ok && pos+4 > len(b):
			return errTruncated
		case !ok || f.rate != first.rate:
			return fmt.Errorf("not an MPEG audio frame at byte %d", pos+start)
		case pos+f.length > len(b):
			return errTruncated
		}
		frames++
		pos += f.length
	}
	if isTag {
		frames--
	}
	// Encoders count the frames after the tag frame; some count it too.
	if hasCount && uint64(frames)+1 < uint64(count) {
		return fmt.Errorf("%d of the %d frames the header announces: %w", frames, count, errTruncated)
	}
	if frames <= 0 {
		return errors.New("no audio frames")
	}
	return nil
}

// trimMP3Tags removes the tags players accept after the audio: an APEv2
// tag, then an ID3v1 tag.
func trimMP3Tags(b []byte) []byte {
	if n := len(b); n >= 128 && string(b[n-128:n-125]) == "TAG" {
		b = b[:n-128]
	}
	if n := len(b); n >= 32 && string(b[n-32:n-24]) == "APETAGEX" {
		size := uint64(binary.LittleEndian.Uint32(b[n-20:]))   // items and footer
		if binary.LittleEndian.Uint32(b[n-12:])&(1<<31) != 0 { // a header precedes the items
			size += 32
		}
		if size <= uint64(n) {
			b = b[:uint64(n)-size]
		}
	}
	return b
}

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

// validateFLAC walks the metadata blocks and then every frame, each
// checked by its header CRC-8 and its CRC-16 footer, and compares the
// samples found with the total STREAMINFO announces.
func validateFLAC(b []byte) error {
	pos := 4 // after "fLaC"
	var total uint64
	for last := false; !last; {
		if pos+4 > len(b) {
			return errTruncated
		}
		last = b[pos]&0x80 != 0
		typ := b[pos] & 0x7f
		n := int(b[pos+1])<<16 | int(b[pos+2])<<8 | int(b[pos+3])
		pos += 4
		if pos+n > len(b) {
			return errTruncated
		}
		switch {
		case typ == 127:
			return errors.New("an invalid metadata block type")
		case pos == 8 && (typ != 0 || n != 34):
			return errors.New("STREAMINFO is not the first metadata block")
		case pos == 8:
			_, total, _ = flacStreamInfo(b[pos : pos+n])
		}
		pos += n
	}
	if _, err := flacDuration(b); err != nil {
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
	if total != 0 && samples != total {
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
