package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/image/webp"
)

// MaxImagePixels bounds the canvas (width times height) of an input image.
// 50 megapixels holds the largest photos the service is sent: a 50 MP
// phone sensor (8160x6120) or a 6x4 print scanned at 1200 dpi. Checking
// does not decode PNG, JPEG or GIF pixels into memory, so the bound is the
// service's, not a memory budget; WebP has one besides (maxCheckMemory).
const MaxImagePixels = 50_000_000

// maxAnimationPixels bounds the frames of an animation together, which are
// all decompressed to be checked: time, not memory.
const maxAnimationPixels = 8 * MaxImagePixels

// maxCheckMemory bounds what checking one image may allocate in proportion
// to its size: a progressive JPEG's non-zero coefficient bits (a byte for
// eight pixels of each component, 25 MB at most) and the pixels
// golang.org/x/image/webp decodes a WebP into, up to 9.5 bytes a pixel.
// 96 MB holds a 50 MP lossy WebP, or a 13 MP lossless one; a WebP that
// needs more is refused rather than decoded.
const maxCheckMemory = 96 << 20

// bigCheck lets one check at a time allocate in proportion to an image, so
// that concurrent uploads cannot add their buffers up.
var bigCheck = make(chan struct{}, 1)

// reserve waits for bigCheck on behalf of a check that will allocate n
// bytes, or refuses n over maxCheckMemory. release frees the slot, after a
// collection when n is large, so that the next check does not stack its
// buffers on this one's garbage; the caller drops its references first.
func reserve(n int64) (release func(), err error) {
	if n > maxCheckMemory {
		return nil, fmt.Errorf("checking it would take %d MB, over the %d MB the reference server gives one image", n>>20, maxCheckMemory>>20)
	}
	bigCheck <- struct{}{}
	return func() {
		if n >= 16<<20 {
			runtime.GC()
		}
		<-bigCheck
	}, nil
}

// validateImage checks every byte of b from the header on, refusing an
// oversized canvas before anything else is read. PNG, JPEG and GIF are
// walked in memory that does not grow with their pixels (or little, for a
// progressive JPEG); WebP, whose codecs only golang.org/x/image reads, is
// decoded within maxCheckMemory.
func validateImage(mt string, b []byte) error {
	w, h, err := ImageConfig(b)
	if err != nil {
		return errors.New("the header does not decode")
	}
	if uint64(w)*uint64(h) > MaxImagePixels {
		return fmt.Errorf("%dx%d is over the %d-megapixel limit", w, h, MaxImagePixels/1_000_000)
	}
	// Deflate packs at most 1032 bytes into one, so a PNG too small to hold
	// its rows at one bit a pixel is cut short: no need to inflate them.
	if mt == TypePNG && uint64(h)*(1+(uint64(w)+7)/8) > 1032*uint64(len(b)) {
		return errTruncated
	}
	switch mt {
	case TypePNG:
		err = checkPNG(b)
	case TypeJPEG:
		err = checkJPEG(b, reserve)
	case TypeGIF:
		err = checkGIF(b)
	case TypeWebP:
		err = checkWebP(b, w, h)
	}
	if err != nil {
		return fmt.Errorf("the image does not decode: %w", err)
	}
	return nil
}

// checkWebP decodes every frame of a WebP with golang.org/x/image/webp,
// once the memory the largest frame needs is reserved.
func checkWebP(b []byte, w, h int) error {
	frames, need, err := walkWebP(b, w, h)
	if err != nil {
		return err
	}
	release, err := reserve(need)
	if err != nil {
		return err
	}
	defer release()
	for i, f := range frames {
		if _, err := webp.Decode(bytes.NewReader(f)); err != nil {
			if len(frames) > 1 {
				return fmt.Errorf("frame %d: %w", i+1, err)
			}
			return err
		}
	}
	return nil
}

// walkWebP checks the RIFF chunks of a WebP file and returns what to
// decode, the whole file for a still image or each frame of an animation
// as a still image of its own (golang.org/x/image/webp decodes still
// images only), with the memory decoding the largest takes.
func walkWebP(b []byte, w, h int) (frames [][]byte, need int64, err error) {
	chunks, err := riffChunks(b)
	if err != nil {
		return nil, 0, err
	}
	if chunks[0].id != "VP8X" || len(chunks[0].data) < 10 || chunks[0].data[0]&0x02 == 0 {
		return [][]byte{b}, webpMemory(chunks, w, h), nil
	}
	var pixels uint64
	for _, c := range chunks[1:] {
		if c.id != "ANMF" {
			continue
		}
		f, fw, fh, err := webpFrame(c.data, w, h)
		if err != nil {
			return nil, 0, err
		}
		if pixels += uint64(fw) * uint64(fh); pixels > maxAnimationPixels {
			return nil, 0, fmt.Errorf("the frames add up to over %d megapixels", maxAnimationPixels/1_000_000)
		}
		frames = append(frames, f)
		if fc, err := riffChunks(f); err == nil {
			need = max(need, webpMemory(fc, fw, fh))
		}
	}
	if len(frames) == 0 {
		return nil, 0, errors.New("an animation without frames")
	}
	return frames, need, nil
}

// webpMemory is what golang.org/x/image/webp allocates to decode a still
// image of these chunks and size, at most: a lossy picture is YCbCr 4:2:0
// over whole macroblocks, 1.5 bytes a pixel; a lossless one is 4 bytes a
// pixel, and as much again while a palette is expanded, plus the images
// of its transforms; an alpha plane is a byte a pixel, after a lossless
// decode when compressed.
func webpMemory(chunks []riffChunk, w, h int) int64 {
	px := int64(w) * int64(h)
	mbs := int64((w+15)/16) * int64((h+15)/16)
	const lossless = 7 // bytes a pixel
	var need int64
	for _, c := range chunks {
		switch c.id {
		case "VP8 ":
			need += 384 * mbs
		case "VP8L":
			need += lossless * px
		case "ALPH":
			need += px
			if len(c.data) > 0 && c.data[0]&0x03 == 1 {
				need += lossless * px
			}
		}
	}
	return need
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
