package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image/gif"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/webp"
)

// MaxImagePixels bounds the canvas (width times height) of an input image:
// 50 megapixels holds a camera photo, and decoding one takes a few hundred
// MB at most.
const MaxImagePixels = 50_000_000

// maxAnimationPixels bounds the frames of an animation together; frames
// decode at one or four bytes a pixel rather than up to eight.
const maxAnimationPixels = 8 * MaxImagePixels

// decodeSlot lets one image decode at a time, so that concurrent uploads
// of large images cannot add up their pixel buffers.
var decodeSlot = make(chan struct{}, 1)

// validateImage decodes every pixel of b.
func validateImage(mt string, b []byte) error {
	w, h, err := ImageConfig(b)
	if err != nil {
		return errors.New("the header does not decode")
	}
	if uint64(w)*uint64(h) > MaxImagePixels {
		return fmt.Errorf("%dx%d is over the %d-megapixel limit", w, h, MaxImagePixels/1_000_000)
	}
	// Deflate packs at most 1032 bytes into one, so a PNG too small to hold
	// its rows at one bit a pixel is cut short: no need to allocate them.
	if mt == TypePNG && uint64(h)*(1+(uint64(w)+7)/8) > 1032*uint64(len(b)) {
		return errTruncated
	}
	var frames func() error
	switch mt {
	case TypePNG:
		frames = func() error { _, err := png.Decode(bytes.NewReader(b)); return err }
	case TypeJPEG:
		frames = func() error { _, err := jpeg.Decode(bytes.NewReader(b)); return err }
	case TypeGIF:
		if err := walkGIF(b); err != nil {
			return err
		}
		// DecodeAll, unlike Decode, reads every frame up to the trailer.
		frames = func() error { _, err := gif.DecodeAll(bytes.NewReader(b)); return err }
	case TypeWebP:
		plan, err := walkWebP(b, w, h)
		if err != nil {
			return err
		}
		frames = plan
	}
	decodeSlot <- struct{}{}
	defer func() { <-decodeSlot }()
	if err := frames(); err != nil {
		return fmt.Errorf("the image does not decode: %w", err)
	}
	return nil
}

// walkGIF follows a GIF's blocks to its trailer without decoding, so that
// a cut file or an animation too big to hold is refused before DecodeAll
// allocates its frames.
func walkGIF(b []byte) error {
	if len(b) < 13 {
		return errTruncated
	}
	pos := 13
	if b[10]&0x80 != 0 { // global colour table
		pos += 3 << (b[10]&7 + 1)
	}
	var pixels uint64
	for {
		if pos >= len(b) {
			return errTruncated
		}
		switch b[pos] {
		case 0x3b: // trailer
			return nil
		case 0x21: // extension: label, then sub-blocks
			var err error
			if pos, err = skipGIFBlocks(b, pos+2); err != nil {
				return err
			}
		case 0x2c: // image descriptor, optional local colour table, LZW data
			if pos+10 > len(b) {
				return errTruncated
			}
			fw, fh := binary.LittleEndian.Uint16(b[pos+5:]), binary.LittleEndian.Uint16(b[pos+7:])
			if pixels += uint64(fw) * uint64(fh); pixels > maxAnimationPixels {
				return fmt.Errorf("the frames add up to over %d megapixels", maxAnimationPixels/1_000_000)
			}
			flags := b[pos+9]
			pos += 10
			if flags&0x80 != 0 {
				pos += 3 << (flags&7 + 1)
			}
			var err error
			if pos, err = skipGIFBlocks(b, pos+1); err != nil { // +1: LZW minimum code size
				return err
			}
		default:
			return fmt.Errorf("unknown block 0x%02x at byte %d", b[pos], pos)
		}
	}
}

// skipGIFBlocks skips data sub-blocks starting at pos up to and including
// the empty block that ends them.
func skipGIFBlocks(b []byte, pos int) (int, error) {
	for {
		if pos >= len(b) {
			return 0, errTruncated
		}
		n := int(b[pos])
		pos++
		if n == 0 {
			return pos, nil
		}
		pos += n
	}
}

// walkWebP checks the RIFF chunks of a WebP file and returns the decoding
// to run: the whole file for a still image, each frame for an animation
// (golang.org/x/image/webp decodes still images only).
func walkWebP(b []byte, w, h int) (func() error, error) {
	chunks, err := riffChunks(b)
	if err != nil {
		return nil, err
	}
	if chunks[0].id != "VP8X" || len(chunks[0].data) < 10 || chunks[0].data[0]&0x02 == 0 {
		return func() error { _, err := webp.Decode(bytes.NewReader(b)); return err }, nil
	}
	var frames [][]byte
	var pixels uint64
	for _, c := range chunks[1:] {
		if c.id != "ANMF" {
			continue
		}
		f, fw, fh, err := webpFrame(c.data, w, h)
		if err != nil {
			return nil, err
		}
		if pixels += uint64(fw) * uint64(fh); pixels > maxAnimationPixels {
			return nil, fmt.Errorf("the frames add up to over %d megapixels", maxAnimationPixels/1_000_000)
		}
		frames = append(frames, f)
	}
	if len(frames) == 0 {
		return nil, errors.New("an animation without frames")
	}
	return func() error {
		for i, f := range frames {
			if _, err := webp.Decode(bytes.NewReader(f)); err != nil {
				return fmt.Errorf("frame %d: %w", i+1, err)
			}
		}
		return nil
	}, nil
}

// riffChunk is one chunk of a RIFF file.
type riffChunk struct {
	id   string
	data []byte
}

// riffChunks splits the body of a RIFF file into chunks, each wholly
// inside the size the RIFF header declares, which must be present.
func riffChunks(b []byte) ([]riffChunk, error) {
	if len(b) < 12 {
		return nil, errTruncated
	}
	end := 8 + uint64(binary.LittleEndian.Uint32(b[4:]))
	if end > uint64(len(b)) {
		return nil, errTruncated
	}
	body := b[12:end]
	var out []riffChunk
	for len(body) > 0 {
		if len(body) < 8 {
			return nil, errTruncated
		}
		size := uint64(binary.LittleEndian.Uint32(body[4:]))
		if 8+size > uint64(len(body)) {
			return nil, errTruncated
		}
		out = append(out, riffChunk{id: string(body[:4]), data: body[8 : 8+size]})
		// A pad byte follows an odd chunk; writers may leave off the last.
		body = body[min(8+size+size%2, uint64(len(body))):]
	}
	if len(out) == 0 {
		return nil, errors.New("no chunks")
	}
	return out, nil
}

// webpFrame turns an ANMF chunk into a still WebP file of its own, which
// the decoder can read, after checking that the frame fits the canvas.
func webpFrame(anmf []byte, canvasW, canvasH int) (file []byte, w, h int, err error) {
	if len(anmf) < 16 {
		return nil, 0, 0, errTruncated
	}
	x, y := 2*int(le24(anmf)), 2*int(le24(anmf[3:]))
	w, h = int(le24(anmf[6:]))+1, int(le24(anmf[9:]))+1
	if x+w > canvasW || y+h > canvasH {
		return nil, 0, 0, errors.New("an animation frame lies outside the canvas")
	}
	// The frame's sub-chunks: an optional ALPH, then VP8 or VP8L.
	body := anmf[16:]
	var alph, pic []byte
	for len(body) >= 8 {
		size := uint64(binary.LittleEndian.Uint32(body[4:]))
		if 8+size > uint64(len(body)) {
			return nil, 0, 0, errTruncated
		}
		whole := body[:8+size]
		switch string(body[:4]) {
		case "ALPH":
			alph = whole
		case "VP8 ", "VP8L":
			pic = whole
		}
		body = body[min(8+size+size%2, uint64(len(body))):]
	}
	if pic == nil {
		return nil, 0, 0, errors.New("an animation frame without an image")
	}
	var chunks [][]byte
	if alph != nil && string(pic[:4]) == "VP8 " {
		vp8x := make([]byte, 18)
		copy(vp8x, "VP8X")
		binary.LittleEndian.PutUint32(vp8x[4:], 10)
		vp8x[8] = 0x10 // alpha
		putLE24(vp8x[12:], uint32(w-1))
		putLE24(vp8x[15:], uint32(h-1))
		chunks = append(chunks, vp8x, pad(alph))
	}
	chunks = append(chunks, pad(pic))
	n := 4
	for _, c := range chunks {
		n += len(c)
	}
	file = make([]byte, 0, 8+n)
	file = append(file, "RIFF"...)
	file = binary.LittleEndian.AppendUint32(file, uint32(n))
	file = append(file, "WEBP"...)
	for _, c := range chunks {
		file = append(file, c...)
	}
	return file, w, h, nil
}

// pad appends the pad byte an odd-sized chunk needs.
func pad(chunk []byte) []byte {
	if len(chunk)%2 == 0 {
		return chunk
	}
	return append(chunk[:len(chunk):len(chunk)], 0)
}

func putLE24(b []byte, v uint32) {
	b[0], b[1], b[2] = byte(v), byte(v>>8), byte(v>>16)
}
