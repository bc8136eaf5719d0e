package media

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
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

// jpegComponent is a frame component as the scans need it.
type jpegComponent struct {
	id   byte
	h, v int
}

// jpegHuffman is a canonical Huffman table: an 8-bit look-up table for the
// short codes, and the first code and value index of each length.
type jpegHuffman struct {
	n       int
	lut     [256]uint16 // value<<8 | (length+1), 0 when the code is longer than 8 bits
	vals    [256]byte
	minCode [16]int32
	maxCode [16]int32 // -1: no code of this length
	index   [16]int32
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

// frame checks a start-of-frame segment: 8-bit samples, one, three or
// four components with sampling factors image/jpeg supports.
func (j *jpegCheck) frame(s []byte) error {
	if j.comps != nil {
		return errors.New("multiple SOF markers")
	}
	nc := 0
	switch len(s) {
	case 6 + 3*1:
		nc = 1
	case 6 + 3*3:
		nc = 3
	case 6 + 3*4:
		nc = 4
	default:
		return errors.New("unsupported number of components")
	}
	if s[0] != 8 {
		return errors.New("unsupported precision")
	}
	j.height, j.width = int(s[1])<<8|int(s[2]), int(s[3])<<8|int(s[4])
	if int(s[5]) != nc {
		return errors.New("SOF has wrong length")
	}
	j.comps = make([]jpegComponent, nc)
	for i := range j.comps {
		c := &j.comps[i]
		c.id = s[6+3*i]
		for _, o := range j.comps[:i] {
			if o.id == c.id {
				return errors.New("repeated component identifier")
			}
		}
		if s[8+3*i] > 3 {
			return errors.New("bad quantization table index")
		}
		hv := s[7+3*i]
		c.h, c.v = int(hv>>4), int(hv&0x0f)
		if c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 || c.h == 3 || c.v == 3 {
			return errors.New("unsupported sampling factors")
		}
		ok := true
		switch nc {
		case 1:
			c.h, c.v = 1, 1 // a single component is never interleaved
		case 3:
			switch i {
			case 0:
				ok = c.v != 4
			case 1:
				ok = j.comps[0].h%c.h == 0 && j.comps[0].v%c.v == 0
			case 2:
				ok = c.h == j.comps[1].h && c.v == j.comps[1].v
			}
		case 4:
			switch i {
			case 0:
				ok = hv == 0x11 || hv == 0x22
			case 1, 2:
				ok = hv == 0x11
			case 3:
				ok = c.h == j.comps[0].h && c.v == j.comps[0].v
			}
		}
		if !ok {
			return errors.New("unsupported sampling factors")
		}
	}
	return nil
}

// quantTables checks a DQT segment's table sizes.
func quantTables(s []byte) error {
	for len(s) > 0 {
		pq, tq := s[0]>>4, s[0]&0x0f
		s = s[1:]
		if tq > 3 {
			return errors.New("bad quantization table index")
		}
		size := 64
		switch pq {
		case 0:
		case 1:
			size = 128
		default:
			return errors.New("bad quantization table precision")
		}
		if len(s) < size {
			break // image/jpeg takes a last table cut to nothing
		}
		s = s[size:]
	}
	if len(s) != 0 {
		return errors.New("DQT has wrong length")
	}
	return nil
}

// tables reads a DHT segment into j.huff.
func (j *jpegCheck) tables(s []byte) error {
	for len(s) > 0 {
		if len(s) < 17 {
			return errors.New("DHT has wrong length")
		}
		class, id := s[0]>>4, s[0]&0x0f
		if class > 1 || id > 3 || (j.baseline && id > 1) {
			return errors.New("bad Huffman table class or index")
		}
		h := &j.huff[class][id]
		counts := s[1:17]
		h.n = 0
		for _, c := range counts {
			h.n += int(c)
		}
		if h.n == 0 || h.n > 256 {
			return errors.New("bad Huffman table size")
		}
		if len(s) < 17+h.n {
			return errors.New("DHT has wrong length")
		}
		copy(h.vals[:], s[17:17+h.n])
		s = s[17+h.n:]
		// The look-up table is filled as image/jpeg fills it, over-full
		// tables included, so that both read the same codes.
		clear(h.lut[:])
		var code, x uint32
		for length := range uint32(8) {
			code <<= 1
			for range counts[length] {
				base := uint8(code << (7 - length))
				v := uint16(h.vals[x])<<8 | uint16(length+2)
				for k := range uint8(1 << (7 - length)) {
					h.lut[base|k] = v
				}
				code++
				x++
			}
		}
		var c, index int32
		for i, n := range counts {
			if n == 0 {
				h.minCode[i], h.maxCode[i], h.index[i] = -1, -1, -1
			} else {
				h.minCode[i], h.maxCode[i], h.index[i] = c, c+int32(n)-1, index
				c += int32(n)
				index += int32(n)
			}
			c <<= 1
		}
	}
	return nil
}

// fill adds one byte of entropy-coded data to the bits, undoing the 0xff
// 0x00 stuffing; at a marker or the end of the file it adds nothing.
func (j *jpegCheck) fill() error {
	if j.pos >= len(j.b) {
		return errJPEGShortData
	}
	c := j.b[j.pos]
	if c == 0xff {
		if j.pos+1 >= len(j.b) {
			return errJPEGShortData
		}
		if j.b[j.pos+1] != 0 {
			return errJPEGMarker
		}
		j.pos++
		j.last = 2
	} else {
		j.last = 1
	}
	j.pos++
	j.acc = j.acc<<8 | uint64(c)
	j.n += 8
	return nil
}

// bits reads n bits.
func (j *jpegCheck) bits(n int) (uint32, error) {
	for j.n < n {
		if err := j.fill(); err != nil {
			return 0, err
		}
	}
	j.n -= n
	return uint32(j.acc>>j.n) & (1<<n - 1), nil
}

// huffman reads one Huffman-coded value.
func (j *jpegCheck) huffman(h *jpegHuffman) (byte, error) {
	if h.n == 0 {
		return 0, errors.New("a scan uses a Huffman table that was never defined")
	}
	if j.n < 8 {
		_ = j.fill() // at the end of the data, the bits left may still hold a code
	}
	if j.n >= 8 {
		if v := h.lut[byte(j.acc>>(j.n-8))]; v != 0 {
			j.n -= int(v&0xff) - 1
			return byte(v >> 8), nil
		}
	}
	var code int32
	for i := range 16 {
		bit, err := j.bits(1)
		if err != nil {
			return 0, err
		}
		code |= int32(bit)
		if code <= h.maxCode[i] {
			return h.vals[h.index[i]+code-h.minCode[i]], nil
		}
		code <<= 1
	}
	return 0, errors.New("bad Huffman code")
}

// receive reads an n-bit magnitude; only its presence matters here.
func (j *jpegCheck) receive(n byte) error {
	if n == 0 {
		return nil
	}
	_, err := j.bits(int(n))
	return err
}

// scan checks a start-of-scan header at j.pos and reads the scan's data.
func (j *jpegCheck) scan(s []byte) error {
	if j.comps == nil {
		return errors.New("missing SOF marker")
	}
	n := len(s)
	if n < 6 || n > 4+2*len(j.comps) || n%2 != 0 {
		return errors.New("SOS has wrong length")
	}
	nc := int(s[0])
	if n != 4+2*nc {
		return errors.New("SOS length inconsistent with number of components")
	}
	type scanComp struct {
		c      int
		dc, ac byte
	}
	sc := make([]scanComp, nc)
	totalHV := 0
	for i := range sc {
		c := -1
		for k, comp := range j.comps {
			if comp.id == s[1+2*i] {
				c = k
			}
		}
		if c < 0 {
			return errors.New("unknown component selector")
		}
		for _, o := range sc[:i] {
			if o.c == c {
				return errors.New("repeated component selector")
			}
		}
		sc[i] = scanComp{c: c, dc: s[2+2*i] >> 4, ac: s[2+2*i] & 0x0f}
		if sc[i].dc > 3 || sc[i].ac > 3 || (j.baseline && (sc[i].dc > 1 || sc[i].ac > 1)) {
			return errors.New("bad Huffman table selector")
		}
		totalHV += j.comps[c].h * j.comps[c].v
	}
	if len(j.comps) > 1 && totalHV > 10 {
		return errors.New("total sampling factors too large")
	}
	start, end, ah, al := 0, 63, byte(0), byte(0)
	if j.progressive {
		start, end = int(s[1+2*nc]), int(s[2+2*nc])
		ah, al = s[3+2*nc]>>4, s[3+2*nc]&0x0f
		if (start == 0 && end != 0) || start > end || end > 63 {
			return errors.New("bad spectral selection bounds")
		}
		if start != 0 && nc != 1 {
			return errors.New("progressive AC coefficients for more than one component")
		}
		if ah != 0 && ah != al+1 {
			return errors.New("bad successive approximation values")
		}
	}
	if j.scans++; j.scans > maxJPEGScans {
		return errJPEGScans
	}
	h0, v0 := j.comps[0].h, j.comps[0].v
	mxx, myy := (j.width+8*h0-1)/(8*h0), (j.height+8*v0-1)/(8*v0)
	if j.progressive {
		for _, c := range sc {
			if j.nonZero[c.c] == nil {
				if err := j.allocate(c.c, mxx*myy*j.comps[c.c].h*j.comps[c.c].v); err != nil {
					return err
				}
			}
		}
	}

	j.acc, j.n = 0, 0
	mcu, rst, blocks := 0, byte(0xd0), 0
	for my := range myy {
		for mx := range mxx {
			for _, c := range sc {
				comp := j.comps[c.c]
				for k := range comp.h * comp.v {
					var bx, by int
					if nc != 1 {
						bx, by = comp.h*mx+k%comp.h, comp.v*my+k/comp.h
					} else {
						// A lone component is read block by block, row by
						// row, and only blocks inside the picture are coded.
						q := mxx * comp.h
						bx, by = blocks%q, blocks/q
						blocks++
						if bx*8 >= j.width || by*8 >= j.height {
							continue
						}
					}
					var nz *uint64
					if j.progressive {
						nz = &j.nonZero[c.c][by*mxx*comp.h+bx]
					}
					if err := j.block(nz, &j.huff[0][c.dc], &j.huff[1][c.ac], start, end, ah); err != nil {
						return err
					}
				}
			}
			mcu++
			if j.restart > 0 && mcu%j.restart == 0 && mcu < mxx*myy {
				j.unread()
				if err := j.findRestart(rst); err != nil {
					return err
				}
				rst = 0xd0 + (rst-0xd0+1)%8
				j.acc, j.n = 0, 0
				j.eobRun = 0
			}
		}
	}
	j.unread()
	return nil
}

// unread gives back the last byte read into the bits when a whole byte of
// them is left unused, as image/jpeg does before it reads a marker.
func (j *jpegCheck) unread() {
	if j.n >= 8 {
		j.pos -= j.last
	}
	j.last = 0
}

// allocate makes the non-zero bits of component c, blocks of them. The
// first call reserves the memory of every component's bits.
func (j *jpegCheck) allocate(c, blocks int) error {
	if j.reserve != nil && j.release == nil {
		h0, v0 := j.comps[0].h, j.comps[0].v
		mcus := int64((j.width+8*h0-1)/(8*h0)) * int64((j.height+8*v0-1)/(8*v0))
		size := int64(0)
		for _, comp := range j.comps {
			size += 8 * mcus * int64(comp.h*comp.v)
		}
		release, err := j.reserve(size)
		if err != nil {
			return err
		}
		j.release = release
	}
	j.nonZero[c] = make([]uint64, blocks)
	return nil
}

// block reads one block's part of a scan. nz is the block's non-zero bits
// in a progressive image, nil in a sequential one.
func (j *jpegCheck) block(nz *uint64, dc, ac *jpegHuffman, start, end int, ah byte) error {
	if ah != 0 {
		return j.refine(nz, ac, start, end)
	}
	zig := start
	if zig == 0 {
		zig++
		t, err := j.huffman(dc)
		if err != nil {
			return err
		}
		if t > 16 {
			return errors.New("excessive DC component")
		}
		if err := j.receive(t); err != nil {
			return err
		}
	}
	if zig <= end && j.eobRun > 0 {
		j.eobRun--
		return nil
	}
	for ; zig <= end; zig++ {
		v, err := j.huffman(ac)
		if err != nil {
			return err
		}
		run, size := int(v>>4), v&0x0f
		if size != 0 {
			zig += run
			if zig > end {
				break
			}
			if err := j.receive(size); err != nil {
				return err
			}
			if nz != nil {
				*nz |= 1 << zig
			}
			continue
		}
		if run != 0x0f {
			if err := j.endOfBands(run); err != nil {
				return err
			}
			j.eobRun--
			break
		}
		zig += 0x0f
	}
	return nil
}

// endOfBands reads the length of a run of 2^run or more end-of-bands.
func (j *jpegCheck) endOfBands(run int) error {
	j.eobRun = 1 << run
	if run != 0 {
		extra, err := j.bits(run)
		if err != nil {
			return err
		}
		j.eobRun |= uint16(extra)
	}
	return nil
}

// refine reads a successive-approximation refinement of one block.
func (j *jpegCheck) refine(nz *uint64, ac *jpegHuffman, start, end int) error {
	if start == 0 { // DC: one bit
		_, err := j.bits(1)
		return err
	}
	zig := start
	if j.eobRun == 0 {
		for ; zig <= end; zig++ {
			v, err := j.huffman(ac)
			if err != nil {
				return err
			}
			run, size := int(v>>4), v&0x0f
			newNonZero := false
			switch size {
			case 0:
				if run != 0x0f {
					if err := j.endOfBands(run); err != nil {
						return err
					}
				}
			case 1:
				newNonZero = true
				if _, err := j.bits(1); err != nil {
					return err
				}
			default:
				return errors.New("unexpected Huffman code in a refinement")
			}
			if j.eobRun > 0 {
				break
			}
			if zig, err = j.refineNonZero(nz, zig, end, run); err != nil {
				return err
			}
			if zig > end {
				return errors.New("too many coefficients")
			}
			if newNonZero {
				*nz |= 1 << zig
			}
		}
	}
	if j.eobRun > 0 {
		j.eobRun--
		if _, err := j.refineNonZero(nz, zig, end, -1); err != nil {
			return err
		}
	}
	return nil
}

// refineNonZero reads a correction bit for each non-zero coefficient from
// zig on, and stops at the zeros+1th zero one (never when zeros is -1).
func (j *jpegCheck) refineNonZero(nz *uint64, zig, end, zeros int) (int, error) {
	if zeros < 0 && zig <= end { // a block in an end-of-band run: its bits at once
		band := *nz >> zig & (1<<(end-zig+1) - 1)
		for n := bits.OnesCount64(band); n > 0; n -= min(n, 32) {
			if _, err := j.bits(min(n, 32)); err != nil {
				return 0, err
			}
		}
		return end + 1, nil
	}
	for ; zig <= end; zig++ {
		if *nz&(1<<zig) == 0 {
			if zeros == 0 {
				break
			}
			zeros--
			continue
		}
		if _, err := j.bits(1); err != nil {
			return 0, err
		}
	}
	return zig, nil
}

// findRestart reads the restart marker rst that must follow an interval,
// skipping to it as image/jpeg does when it is not next: any other marker
// is an error.
func (j *jpegCheck) findRestart(rst byte) error {
	for {
		if len(j.b)-j.pos < 2 {
			return errTruncated
		}
		a, b := j.b[j.pos], j.b[j.pos+1]
		switch {
		case a == 0xff && b == rst:
			j.pos += 2
			return nil
		case a == 0xff && b == 0xff, a != 0xff && b == 0xff:
			j.pos++
		case a == 0xff && b != 0:
			return errors.New("bad restart marker")
		default:
			j.pos += 2
		}
	}
}
