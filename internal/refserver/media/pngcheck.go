package media

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// checkPNG reads a PNG the way image/png decodes it, and refuses what it
// refuses: chunk order and CRCs, IHDR, PLTE and tRNS, the zlib stream and
// its checksum, every row's filter type, and exactly as much pixel data as
// the header calls for, pass by pass when interlaced. The rows are
// inflated through a small buffer and dropped, never gathered into an
// image, so the memory it takes does not depend on the image's size.
func checkPNG(b []byte) error {
	if len(b) < 8 || string(b[:8]) != "\x89PNG\r\n\x1a\n" {
		return errors.New("not a PNG file")
	}
	p := pngCheck{b: b, pos: 8}
	for p.stage != pngSeenIEND {
		if err := p.chunk(); err != nil {
			return err
		}
	}
	return nil
}

// The stages image/png goes through, in order.
const (
	pngStart = iota
	pngSeenIHDR
	pngSeenPLTE
	pngSeenTRNS
	pngSeenIDAT
	pngSeenIEND
)

// pngCheck is the state of one walk through a PNG's chunks.
type pngCheck struct {
	b     []byte
	pos   int // the start of the next chunk
	stage int

	width, height    int
	depth, colorType byte
	interlaced       bool
	pixelBits        int // bits a pixel in the rows
}

// chunk checks the chunk at p.pos and moves past it.
func (p *pngCheck) chunk() error {
	typ, data, err := p.next()
	if err != nil {
		return err
	}
	switch typ {
	case "IHDR":
		if p.stage != pngStart {
			return errPNGOrder
		}
		p.stage = pngSeenIHDR
		return p.ihdr(data)
	case "PLTE":
		if p.stage != pngSeenIHDR {
			return errPNGOrder
		}
		p.stage = pngSeenPLTE
		n := len(data) / 3
		if len(data)%3 != 0 || n <= 0 || n > 256 || n > 1<<p.depth {
			return errors.New("bad PLTE length")
		}
		if p.colorType != 3 && p.colorType != 2 && p.colorType != 6 {
			return fmt.Errorf("a palette in an image of colour type %d", p.colorType)
		}
		return nil
	case "tRNS":
		return p.trns(data)
	case "IDAT":
		if p.stage < pngSeenIHDR || p.stage > pngSeenIDAT || (p.stage == pngSeenIHDR && p.colorType == 3) {
			return errPNGOrder
		}
		if p.stage == pngSeenIDAT {
			return nil // trailing IDAT chunks are ignored, as image/png does
		}
		p.stage = pngSeenIDAT
		return p.pixels(data)
	case "IEND":
		if p.stage != pngSeenIDAT {
			return errPNGOrder
		}
		if len(data) != 0 {
			return errors.New("bad IEND length")
		}
		p.stage = pngSeenIEND
	}
	return nil
}

var errPNGOrder = errors.New("chunk out of order")

// next returns the type and data of the chunk at p.pos, whose CRC it
// checks, and moves past it.
func (p *pngCheck) next() (typ string, data []byte, err error) {
	if len(p.b)-p.pos < 8 {
		return "", nil, errTruncated
	}
	n := binary.BigEndian.Uint32(p.b[p.pos:])
	if n > 0x7fffffff {
		return "", nil, fmt.Errorf("bad chunk length %d", n)
	}
	if uint64(len(p.b)-p.pos) < 12+uint64(n) {
		return "", nil, errTruncated
	}
	body := p.b[p.pos+4 : p.pos+8+int(n)]
	if crc32.ChecksumIEEE(body) != binary.BigEndian.Uint32(p.b[p.pos+8+int(n):]) {
		return "", nil, fmt.Errorf("the %s chunk at byte %d fails its CRC", printable(string(body[:4])), p.pos)
	}
	p.pos += 12 + int(n)
	return string(body[:4]), body[4:], nil
}

// ihdr checks the header chunk: sizes, compression, filter and interlace
// methods, and a bit depth the colour type allows.
func (p *pngCheck) ihdr(d []byte) error {
	if len(d) != 13 {
		return errors.New("bad IHDR length")
	}
	w, h := int32(binary.BigEndian.Uint32(d)), int32(binary.BigEndian.Uint32(d[4:]))
	if w <= 0 || h <= 0 {
		return errors.New("non-positive dimension")
	}
	if d[10] != 0 || d[11] != 0 || d[12] > 1 {
		return errors.New("unknown compression, filter or interlace method")
	}
	p.width, p.height, p.depth, p.colorType, p.interlaced = int(w), int(h), d[8], d[9], d[12] == 1
	channels := map[byte]int{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[p.colorType]
	ok := false
	switch p.depth {
	case 1, 2, 4:
		ok = p.colorType == 0 || p.colorType == 3
	case 8:
		ok = channels > 0
	case 16:
		ok = channels > 0 && p.colorType != 3
	}
	if !ok {
		return fmt.Errorf("unsupported bit depth %d for colour type %d", p.depth, p.colorType)
	}
	p.pixelBits = channels * int(p.depth)
	return nil
}

// trns checks a transparency chunk's place and length for the colour type.
func (p *pngCheck) trns(d []byte) error {
	switch p.colorType {
	case 3:
		if p.stage != pngSeenPLTE {
			return errPNGOrder
		}
	case 2:
		if p.stage != pngSeenIHDR && p.stage != pngSeenPLTE {
			return errPNGOrder
		}
	default:
		if p.stage != pngSeenIHDR {
			return errPNGOrder
		}
	}
	p.stage = pngSeenTRNS
	switch {
	case p.colorType == 0 && len(d) == 2, p.colorType == 2 && len(d) == 6, p.colorType == 3 && len(d) <= 256:
		return nil
	case p.colorType == 4 || p.colorType == 6:
		return errors.New("tRNS in an image with an alpha channel")
	}
	return errors.New("bad tRNS length")
}

// pixels inflates the zlib stream that starts in first, the data of the
// first IDAT chunk, and runs on through the IDAT chunks from p.pos,
// checking each row's filter type, that it holds exactly the rows the
// header calls for, and that it ends, checksum and all, inside the last
// IDAT chunk it touches; p.pos is left after that chunk.
func (p *pngCheck) pixels(first []byte) error {
	idat := &idatReader{p: p, left: first}
	zr, err := zlib.NewReader(idat)
	if err != nil {
		return err
	}
	r := bufio.NewReaderSize(zr, 32<<10)
	passes := adam7
	if !p.interlaced {
		passes = []adam7Pass{{0, 0, 1, 1}}
	}
	for _, pass := range passes {
		w := (p.width - pass.x + pass.dx - 1) / pass.dx
		h := (p.height - pass.y + pass.dy - 1) / pass.dy
		if w == 0 || h == 0 {
			continue // an empty pass has no rows, not even filter bytes
		}
		row := (int64(w)*int64(p.pixelBits) + 7) / 8
		for range h {
			f, err := r.ReadByte()
			if err == nil && f > 4 {
				return fmt.Errorf("bad filter type %d", f)
			}
			if err == nil {
				_, err = r.Discard(int(row))
			}
			if err == io.EOF {
				return errors.New("not enough pixel data")
			}
			if err != nil {
				return err
			}
		}
	}
	if _, err := r.ReadByte(); err == nil || len(idat.left) > 0 {
		return errors.New("too much pixel data")
	} else if err != io.EOF {
		return err
	}
	return nil
}

// adam7Pass is one pass of Adam7 interlacing: the first pixel's column and
// row, and the steps between pixels.
type adam7Pass struct{ x, y, dx, dy int }

var adam7 = []adam7Pass{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}

// idatReader reads the data of consecutive IDAT chunks as one stream. It
// has no ReadByte, so that zlib buffers it exactly as it buffers
// image/png's reader, and a stream that ends short of its chunk's end is
// judged alike.
type idatReader struct {
	p    *pngCheck
	left []byte // the unread data of the current chunk
}

func (r *idatReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for len(r.left) == 0 {
		if len(r.p.b)-r.p.pos >= 8 && string(r.p.b[r.p.pos+4:r.p.pos+8]) != "IDAT" {
			return 0, errors.New("not enough pixel data")
		}
		_, data, err := r.p.next()
		if err != nil {
			return 0, err
		}
		r.left = data
	}
	n := copy(b, r.left)
	r.left = r.left[n:]
	return n, nil
}
