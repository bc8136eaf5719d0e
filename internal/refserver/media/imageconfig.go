package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // registers GIF with image.DecodeConfig
	_ "image/jpeg" // registers JPEG with image.DecodeConfig
	_ "image/png"  // registers PNG with image.DecodeConfig
)

// ImageConfig returns the pixel size of a PNG, JPEG, GIF or WebP image from
// its header. PNG, JPEG and GIF go through image.DecodeConfig; WebP's VP8,
// VP8L and VP8X headers are read by hand (the standard library has no WebP
// decoder). Anything else, a header that does not decode, or a zero size is
// an error: an image must decode as an image. Only the header is read, so
// corrupt pixel data after a valid header is not noticed.
func ImageConfig(b []byte) (width, height int, err error) {
	mt, _ := Detect(b)
	switch mt {
	case TypeWebP:
		width, height, err = webpConfig(b)
	case TypePNG, TypeJPEG, TypeGIF:
		var cfg image.Config
		cfg, _, err = image.DecodeConfig(bytes.NewReader(b))
		width, height = cfg.Width, cfg.Height
	default:
		return 0, 0, fmt.Errorf("media: not an image (detected %s)", mt)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("media: %s does not decode: %w", mt, err)
	}
	if width <= 0 || height <= 0 {
		return 0, 0, fmt.Errorf("media: %s has empty size %dx%d", mt, width, height)
	}
	return width, height, nil
}

// webpConfig reads the canvas size from the first chunk of a WebP file.
func webpConfig(b []byte) (width, height int, err error) {
	if len(b) < 20 {
		return 0, 0, errors.New("truncated WebP header")
	}
	chunk := string(b[12:16])
	size := binary.LittleEndian.Uint32(b[16:])
	data := b[20:]
	if uint64(size) < uint64(len(data)) {
		data = data[:size]
	}
	switch chunk {
	case "VP8 ": // lossy: 3-byte frame tag, start code, 14-bit sizes
		if len(data) < 10 || data[0]&1 != 0 || !bytes.Equal(data[3:6], []byte{0x9d, 0x01, 0x2a}) {
			return 0, 0, errors.New("bad VP8 key frame header")
		}
		return int(binary.LittleEndian.Uint16(data[6:]) & 0x3fff), int(binary.LittleEndian.Uint16(data[8:]) & 0x3fff), nil
	case "VP8L": // lossless: signature 0x2f, then 14-bit sizes minus one
		if len(data) < 5 || data[0] != 0x2f {
			return 0, 0, errors.New("bad VP8L header")
		}
		bits := binary.LittleEndian.Uint32(data[1:])
		return int(bits&0x3fff) + 1, int(bits>>14&0x3fff) + 1, nil
	case "VP8X": // extended: flags, reserved, 24-bit canvas sizes minus one
		if len(data) < 10 {
			return 0, 0, errors.New("bad VP8X header")
		}
		return int(le24(data[4:])) + 1, int(le24(data[7:])) + 1, nil
	}
	return 0, 0, fmt.Errorf("unknown WebP chunk %q", printable(chunk))
}

// le24 reads a 24-bit little-endian integer.
func le24(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
}
