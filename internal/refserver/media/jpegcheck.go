package media

import (
	"bytes"
	"errors"
	"fmt"
)

// checkJPEG reads a JPEG the way image/jpeg decodes it, and refuses what it
// refuses: markers and segment lengths, frame and scan headers, Huffman
// tables, every Huffman code of every scan with its restart markers, and
// the end-of-image marker. It keeps no pixels and no coefficients: only,
// for progressive images, one bit a coefficient saying whether it is
// non-zero, which refinement scans need to be read at all; reserve is
// called with the bytes of those bits before they are allocated, and may
// refuse them.
//
// The decoder's leniencies are kept, so that the verdict is the same: bytes
// between segments are skipped, a restart marker out of place is looked
// for further on, a stray restart marker after a scan is ignored.
func checkJPEG(b []byte, reserve func(bytes int64) (release func(), err error)) error {
	// Scans cost time in proportion to the image, so too many are refused
	// before the first is read: an SOS marker's two bytes cannot occur in
	// entropy-coded data (a 0xFF there is followed by 0x00 or a restart),
	// so counting them bounds the scans from above in one pass.
	if bytes.Count(b, []byte{0xFF, 0xDA}) > maxJPEGScans {
		return errJPEGScans
	}
	j := jpegCheck{b: b, reserve: reserve}
	err := j.walk()
	if j.release != nil {
		j.nonZero = [4][]uint64{} // garbage for the collection release may run
		j.release()
	}
	return err
}

// jpegCheck is the state of one walk through a JPEG.
type jpegCheck struct {
	b   []byte
	pos int

	// The entropy-coded bits: acc holds n unread bits, low-order; the
	// last byte added to them took last bytes of the file (two when
	// stuffed).
	acc  uint64
	n    int
	last int

	width, height int
	comps         []jpegComponent
	baseline      bool
	progressive   bool
	restart       int
	adobe         bool // an Adobe APP14 segment, which a four-component image needs
	scans         int
	huff          [2][4]jpegHuffman
	eobRun        uint16
	nonZero       [4][]uint64 // progressive: per block, bit k set when coefficient k in zig-zag order is non-zero

	reserve func(bytes int64) (release func(), err error)
	release func()
}

var (
	errJPEGShortData = errors.New("the entropy-coded data ends early")
	errJPEGMarker    = errors.New("a marker inside entropy-coded data")
	errJPEGScans     = fmt.Errorf("more than %d scans", maxJPEGScans)
)

// maxJPEGScans bounds the scans of a JPEG. Each goes through every block
// of its components, and an end-of-band run codes 32767 blocks in two
// bytes, so a small file of many scans would take minutes to read (so it
// does image/jpeg). Encoders write about ten; image libraries that cap
// them allow 256.
const maxJPEGScans = 256

func (j *jpegCheck) walk() error {
	if len(j.b) < 2 || j.b[0] != 0xff || j.b[1] != 0xd8 {
		return errors.New("missing SOI marker")
	}
	j.pos = 2
	for {
		marker, err := j.nextMarker()
		if err != nil {
			return err
		}
		if marker == 0xd9 { // EOI
			break
		}
		if marker >= 0xd0 && marker <= 0xd7 {
			continue // a restart marker after the last scan: ignored
		}
		if len(j.b)-j.pos < 2 {
			return errTruncated
		}
		n := int(j.b[j.pos])<<8 | int(j.b[j.pos+1]) - 2
		j.pos += 2
		if n < 0 {
			return errors.New("short segment length")
		}
		if len(j.b)-j.pos < n {
			return errTruncated
		}
		seg := j.b[j.pos : j.pos+n]
		j.pos += n
		switch {
		case marker == 0xc0, marker == 0xc1, marker == 0xc2:
			j.baseline, j.progressive = marker == 0xc0, marker == 0xc2
			err = j.frame(seg)
		case marker == 0xc4:
			err = j.tables(seg)
		case marker == 0xdb:
			err = quantTables(seg)
		case marker == 0xdd:
			if n != 2 {
				return errors.New("DRI has wrong length")
			}
			j.restart = int(seg[0])<<8 | int(seg[1])
		case marker == 0xda:
			err = j.scan(seg) // its data follows the header
		case marker == 0xee:
			if n >= 12 && string(seg[:5]) == "Adobe" {
				j.adobe = true
			}
		case marker >= 0xe0 && marker <= 0xef, marker == 0xfe:
			// application data and comments
		case marker < 0xc0:
			return fmt.Errorf("unknown marker 0x%02x", marker)
		default:
			return fmt.Errorf("unsupported marker 0x%02x (arithmetic, lossless or hierarchical coding)", marker)
		}
		if err != nil {
			return err
		}
	}
	switch {
	case j.scans == 0:
		return errors.New("missing SOS marker")
	case len(j.comps) == 4 && !j.adobe:
		return errors.New("a four-component image without Adobe colour metadata")
	}
	return nil
}

// nextMarker skips to the next marker, as image/jpeg does: bytes before
// an 0xff are ignored, as are 0xff 0x00 pairs and fill bytes.
func (j *jpegCheck) nextMarker() (byte, error) {
	for {
		if len(j.b)-j.pos < 2 {
			return 0, errTruncated
		}
		if j.b[j.pos] != 0xff {
			j.pos++
			continue
		}
		m := j.b[j.pos+1]
		j.pos += 2
		if m == 0 {
			continue
		}
		for m == 0xff {
			if j.pos >= len(j.b) {
				return 0, errTruncated
			}
			m = j.b[j.pos]
			j.pos++
		}
		return m, nil
	}
}
