package media

import (
	"bytes"
	"compress/lzw"
	"errors"
	"fmt"
	"io"
)

// checkGIF reads a GIF the way image/gif's DecodeAll does, and refuses what
// it refuses: blocks and extensions, frames inside the screen, a colour
// table for every frame, each frame's LZW data holding exactly its pixels,
// every pixel inside its palette. Pixels are decompressed through a small
// buffer and dropped, so the memory it takes does not depend on the size
// or the number of frames.
func checkGIF(b []byte) error {
	r := bytes.NewReader(b)
	hdr := make([]byte, 13)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return errTruncated
	}
	if v := string(hdr[:6]); v != "GIF87a" && v != "GIF89a" {
		return fmt.Errorf("unknown version %q", printable(v))
	}
	g := gifCheck{r: r, width: int(gifU16(hdr[6:])), height: int(gifU16(hdr[8:])), transparent: -1}
	if hdr[10]&0x80 != 0 {
		g.globalColors = 1 << (hdr[10]&7 + 1)
		if err := g.skip(3 * g.globalColors); err != nil {
			return err
		}
	}
	frames := 0
	for {
		c, err := r.ReadByte()
		if err != nil {
			return errTruncated
		}
		switch c {
		case 0x21:
			err = g.extension()
		case 0x2c:
			err = g.frame()
			frames++
		case 0x3b:
			if frames == 0 {
				return errors.New("no image data")
			}
			return nil
		default:
			return fmt.Errorf("unknown block type 0x%02x", c)
		}
		if err != nil {
			return err
		}
	}
}

// gifCheck is the state of one walk through a GIF.
type gifCheck struct {
	r             *bytes.Reader
	width, height int
	globalColors  int    // 0: no global colour table
	transparent   int    // the transparent index graphic controls set for the next frame, or -1
	pixelsSeen    uint64 // in the frames so far
	lzw           *lzw.Reader
	pixels        []byte
	block         [256]byte
}

// gifU16 reads a little-endian 16-bit field.
func gifU16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }

// skip moves past n bytes, which must be there.
func (g *gifCheck) skip(n int) error {
	if g.r.Len() < n {
		return errTruncated
	}
	_, err := g.r.Seek(int64(n), io.SeekCurrent)
	return err
}

// subBlocks moves past data sub-blocks up to the empty one that ends them.
func (g *gifCheck) subBlocks() error {
	for {
		n, err := g.r.ReadByte()
		if err != nil {
			return errTruncated
		}
		if n == 0 {
			return nil
		}
		if err := g.skip(int(n)); err != nil {
			return err
		}
	}
}

// extension checks an extension block after its introducer.
func (g *gifCheck) extension() error {
	label, err := g.r.ReadByte()
	if err != nil {
		return errTruncated
	}
	switch label {
	case 0x01: // plain text: a 13-byte header, then sub-blocks
		if err := g.skip(13); err != nil {
			return err
		}
	case 0xf9: // graphic control: exactly one 4-byte block
		var gc [6]byte
		if _, err := io.ReadFull(g.r, gc[:]); err != nil {
			return errTruncated
		}
		if gc[0] != 4 || gc[5] != 0 {
			return errors.New("bad graphic control extension")
		}
		if gc[1]&1 != 0 {
			g.transparent = int(gc[4])
		}
		return nil
	case 0xfe: // comment: sub-blocks only
	case 0xff: // application: a header block of any size, then sub-blocks
		n, err := g.r.ReadByte()
		if err != nil {
			return errTruncated
		}
		if err := g.skip(int(n)); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown extension 0x%02x", label)
	}
	return g.subBlocks()
}

// frame checks an image descriptor, its colour table and its LZW data.
func (g *gifCheck) frame() error {
	var d [9]byte
	if _, err := io.ReadFull(g.r, d[:]); err != nil {
		return errTruncated
	}
	left, top := int(gifU16(d[0:])), int(gifU16(d[2:]))
	w, h := int(gifU16(d[4:])), int(gifU16(d[6:]))
	if left+w > g.width || top+h > g.height {
		return errors.New("a frame lies outside the screen")
	}
	if g.pixelsSeen += uint64(w) * uint64(h); g.pixelsSeen > maxAnimationPixels {
		return fmt.Errorf("the frames add up to over %d megapixels", maxAnimationPixels/1_000_000)
	}
	colors := g.globalColors
	if d[8]&0x80 != 0 {
		colors = 1 << (d[8]&7 + 1)
		if err := g.skip(3 * colors); err != nil {
			return err
		}
	} else if colors == 0 {
		return errors.New("a frame without a colour table")
	}
	if g.transparent >= colors {
		colors = g.transparent + 1 // decoders take it as one more, transparent, colour
	}
	g.transparent = -1
	litWidth, err := g.r.ReadByte()
	if err != nil {
		return errTruncated
	}
	if litWidth < 2 || litWidth > 8 {
		return fmt.Errorf("LZW code size %d out of range", litWidth)
	}
	br := &gifBlocks{g: g}
	if g.lzw == nil {
		g.lzw = lzw.NewReader(br, lzw.LSB, int(litWidth)).(*lzw.Reader)
		g.pixels = make([]byte, 32<<10)
	} else {
		g.lzw.Reset(br, lzw.LSB, int(litWidth))
	}
	for left := w * h; left > 0; {
		chunk := g.pixels[:min(left, len(g.pixels))]
		n, err := io.ReadFull(g.lzw, chunk)
		if colors < 256 {
			for _, c := range chunk[:n] {
				if int(c) >= colors {
					return errors.New("a pixel outside the palette")
				}
			}
		}
		left -= n
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return errors.New("not enough image data")
		} else if err != nil {
			return err
		}
	}
	// The LZW data must end here, with or without its end code.
	if n, err := g.lzw.Read(g.pixels[:1]); n != 0 || (err != io.EOF && err != io.ErrUnexpectedEOF) {
		if err != nil {
			return err
		}
		return errors.New("too much image data")
	}
	return br.close()
}

// gifBlocks reads the data sub-blocks of a frame as one stream, as
// image/gif's blockReader does: with ReadByte, so that LZW reads no further
// than it needs, and with the same tolerance of a stray byte at the end.
type gifBlocks struct {
	g    *gifCheck
	i, j int // g.block[i:j] is buffered
	err  error
}

func (b *gifBlocks) fill() {
	if b.err != nil {
		return
	}
	n, err := b.g.r.ReadByte()
	switch {
	case err != nil:
		b.err = io.ErrUnexpectedEOF
		return
	case n == 0:
		b.err = io.EOF
		return
	}
	b.i, b.j = 0, int(n)
	if _, err := io.ReadFull(b.g.r, b.g.block[:n]); err != nil {
		b.j, b.err = 0, io.ErrUnexpectedEOF
	}
}

func (b *gifBlocks) ReadByte() (byte, error) {
	if b.i == b.j {
		b.fill()
		if b.err != nil {
			return 0, b.err
		}
	}
	c := b.g.block[b.i]
	b.i++
	return c, nil
}

func (b *gifBlocks) Read(p []byte) (int, error) {
	if len(p) == 0 || b.err != nil {
		return 0, b.err
	}
	if b.i == b.j {
		b.fill()
		if b.err != nil {
			return 0, b.err
		}
	}
	n := copy(p, b.g.block[b.i:b.j])
	b.i += n
	return n, nil
}

// close checks that the sub-blocks end after the LZW data: at once, or
// after what is left of the current block, or after one more block of one
// byte, as encoders in the wild leave.
func (b *gifBlocks) close() error {
	switch {
	case b.err == io.EOF:
		return nil
	case b.err != nil:
		return errTruncated
	}
	if b.i == b.j {
		b.fill()
		switch {
		case b.err == io.EOF:
			return nil
		case b.err != nil:
			return errTruncated
		case b.j > 1:
			return errors.New("too much image data")
		}
	}
	b.fill()
	switch {
	case b.err == io.EOF:
		return nil
	case b.err != nil:
		return errTruncated
	}
	return errors.New("too much image data")
}
