package media

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// errNoMovie reports ISO BMFF bytes without a usable movie header.
var errNoMovie = errors.New("media: no moov/mvhd box")

// maxTracks bounds how many tracks are remembered from a hostile file.
const maxTracks = 64

// mp4Box is one ISO BMFF box met by walkBoxes.
type mp4Box struct {
	typ        string
	start, end uint64 // offsets of its header and its end in the bytes walked
	body       []byte // what follows the header, to the end
}

// bodyStart is the offset of the box's body in the bytes walked.
func (x mp4Box) bodyStart() uint64 { return x.end - uint64(len(x.body)) }

// boxHeader reads the box at the start of b and checks that it lies within
// b: its type, header length and whole size.
func boxHeader(b []byte) (typ string, hdr, size uint64, err error) {
	n := uint64(len(b))
	if n < 8 {
		return "", 0, 0, errTruncated
	}
	size, typ, hdr = uint64(binary.BigEndian.Uint32(b)), string(b[4:8]), 8
	switch size {
	case 0: // to the end of the file
		size = n
	case 1:
		if n < 16 {
			return "", 0, 0, errTruncated
		}
		size, hdr = binary.BigEndian.Uint64(b[8:]), 16
	}
	if size < hdr {
		return "", 0, 0, fmt.Errorf("box %q has a size smaller than its header", printable(typ))
	}
	if size > n {
		return "", 0, 0, fmt.Errorf("box %q: %w", printable(typ), errTruncated)
	}
	return typ, hdr, size, nil
}

// walkBoxes calls fn for each box in b in order until fn returns false. It
// fails on a box whose size is smaller than its header or runs past the end
// of b; boxes before it have been visited. It is the one box walker: the
// probes, the upload validation and the tests of the files MP4 writes all
// read boxes through it.
func walkBoxes(b []byte, fn func(mp4Box) bool) error {
	for pos := uint64(0); pos < uint64(len(b)); {
		typ, hdr, size, err := boxHeader(b[pos:])
		if err != nil {
			return err
		}
		if !fn(mp4Box{typ, pos, pos + size, b[pos+hdr : pos+size]}) {
			return nil
		}
		pos += size
	}
	return nil
}

// findBox returns the body of the first box of type typ directly inside b.
func findBox(b []byte, typ string) ([]byte, bool) {
	var found []byte
	ok := false
	_ = walkBoxes(b, func(x mp4Box) bool {
		if x.typ == typ {
			found, ok = x.body, true
		}
		return !ok
	})
	return found, ok
}

// boxPath follows a path of child boxes from b.
func boxPath(b []byte, path ...string) ([]byte, bool) {
	for _, typ := range path {
		var ok bool
		if b, ok = findBox(b, typ); !ok {
			return nil, false
		}
	}
	return b, true
}

// fullBoxBody returns a full box's body after its version and flags, and
// the flags.
func fullBoxBody(b []byte) ([]byte, uint32, bool) {
	if len(b) < 4 {
		return nil, 0, false
	}
	return b[4:], binary.BigEndian.Uint32(b) & 0xffffff, true
}

// mp4Track is what the probes need from one trak box.
type mp4Track struct {
	handler        string // hdlr handler_type: "vide", "soun", ...
	width, height  int    // tkhd, integer part of the 16.16 values
	scale, ticks   uint64 // mdhd timescale and duration
	hasMediaHeader bool
	sampleRate     int // sound: the first sample entry's rate, 0 when it has none
}

// mp4Movie is what the probes need from a moov box.
type mp4Movie struct {
	scale, ticks uint64 // mvhd timescale and duration
	tracks       []mp4Track
}

// parseMovie finds moov at the top level of b and reads its headers.
func parseMovie(b []byte) (mp4Movie, error) {
	var m mp4Movie
	moov, ok := findBox(b, "moov")
	if !ok {
		return m, errNoMovie
	}
	mvhd, ok := findBox(moov, "mvhd")
	if !ok {
		return m, errNoMovie
	}
	var err error
	if m.scale, m.ticks, err = timeHeader(mvhd); err != nil {
		return m, err
	}
	_ = walkBoxes(moov, func(x mp4Box) bool {
		if x.typ == "trak" {
			m.tracks = append(m.tracks, parseTrack(x.body))
		}
		return len(m.tracks) < maxTracks
	})
	return m, nil
}

// timeHeader reads timescale and duration from an mvhd or mdhd body, whose
// layouts agree up to those fields in both versions.
func timeHeader(body []byte) (scale, ticks uint64, err error) {
	if len(body) < 1 {
		return 0, 0, errors.New("media: empty time header")
	}
	switch body[0] {
	case 0:
		if len(body) < 20 {
			return 0, 0, errors.New("media: truncated time header")
		}
		scale = uint64(binary.BigEndian.Uint32(body[12:]))
		ticks = uint64(binary.BigEndian.Uint32(body[16:]))
	case 1:
		if len(body) < 32 {
			return 0, 0, errors.New("media: truncated time header")
		}
		scale = uint64(binary.BigEndian.Uint32(body[20:]))
		ticks = binary.BigEndian.Uint64(body[24:])
	default:
		return 0, 0, errors.New("media: unknown time header version")
	}
	if scale == 0 {
		return 0, 0, errors.New("media: zero timescale")
	}
	return scale, ticks, nil
}

// parseTrack reads the handler, size and media clock of a trak body;
// missing or short boxes leave zero values.
func parseTrack(trak []byte) mp4Track {
	var t mp4Track
	if tkhd, ok := findBox(trak, "tkhd"); ok && len(tkhd) > 0 {
		off := 76 // version 0: width follows 4+20+8+8+36 bytes
		if tkhd[0] == 1 {
			off = 88
		}
		if len(tkhd) >= off+8 {
			t.width = int(binary.BigEndian.Uint32(tkhd[off:]) >> 16)
			t.height = int(binary.BigEndian.Uint32(tkhd[off+4:]) >> 16)
		}
	}
	mdia, ok := findBox(trak, "mdia")
	if !ok {
		return t
	}
	if hdlr, ok := findBox(mdia, "hdlr"); ok && len(hdlr) >= 12 {
		t.handler = string(hdlr[8:12])
	}
	if mdhd, ok := findBox(mdia, "mdhd"); ok {
		if s, d, err := timeHeader(mdhd); err == nil {
			t.scale, t.ticks, t.hasMediaHeader = s, d, true
		}
	}
	if t.handler == "soun" {
		t.sampleRate = soundEntryRate(mdia)
	}
	return t
}

// soundEntryRate reads the sample rate of the first sample entry of a
// sound track: 16.16 fixed point in ISO and QuickTime version 0 and 1
// entries, a float64 in QuickTime version 2 ones; 0 when absent.
func soundEntryRate(mdia []byte) int {
	stsd, ok := boxPath(mdia, "minf", "stbl", "stsd")
	if !ok || len(stsd) < 8 {
		return 0
	}
	var entry []byte
	_ = walkBoxes(stsd[8:], func(x mp4Box) bool {
		entry = x.body
		return false
	})
	if len(entry) < 28 {
		return 0
	}
	if binary.BigEndian.Uint16(entry[8:]) == 2 {
		if len(entry) < 40 {
			return 0
		}
		r := math.Float64frombits(binary.BigEndian.Uint64(entry[32:]))
		if !(r > 0 && r < math.MaxInt32) {
			return 0
		}
		return int(r)
	}
	return int(binary.BigEndian.Uint32(entry[24:]) >> 16)
}

// ProbeMP4 reads an ISO BMFF (MP4, M4A, MOV) file's movie duration from
// mvhd and the size from the tkhd of its first video track. An audio-only
// file has width and height 0. It fails when there is no readable moov/mvhd.
func ProbeMP4(b []byte) (duration time.Duration, width, height int, err error) {
	m, err := parseMovie(b)
	if err != nil {
		return 0, 0, 0, err
	}
	duration, err = ticksToDuration(m.ticks, m.scale)
	if err != nil {
		return 0, 0, 0, err
	}
	for _, t := range m.tracks {
		if t.handler == "vide" {
			return duration, t.width, t.height, nil
		}
	}
	return duration, 0, 0, nil
}

// printable returns s with bytes outside printable ASCII replaced, so box
// types from hostile files are safe in error messages.
func printable(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}
