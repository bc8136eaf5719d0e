package media

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Validate checks that b is a whole, well-formed file of the type [Detect]
// finds, before the service charges for using it:
//
//   - images are read to their last byte and refused where their decoders
//     refuse them, every frame of an animation included: PNG, JPEG and GIF
//     by walkers that stand in for the standard library's decoders without
//     gathering pixels (rows are inflated and dropped, Huffman codes read
//     and no coefficients kept), WebP by golang.org/x/image/webp after a
//     walk of its RIFF chunks, when the memory it takes is within bounds;
//     a canvas over [MaxImagePixels] is refused before any pixel is read;
//   - audio and video are walked to their last byte: WAV chunks, MPEG audio
//     frames, Ogg pages (sizes and CRCs, ended by an end-of-stream page),
//     FLAC metadata and frames (CRCs, and the sample count of STREAMINFO),
//     the ISO BMFF box tree with every chunk of samples inside an mdat, the
//     WebM EBML element tree; and their duration must be known and positive;
//   - documents by their structure: a PDF header and a startxref that
//     points at a cross-reference, followed by %%EOF; a ZIP end of central
//     directory whose directory agrees with the local headers; JSON that
//     parses; text that is valid UTF-8 without control characters.
//
// The error says what is wrong in terms a caller can act on. Validate reads
// only what is present and never allocates in proportion to a header field,
// except, within a fixed budget and one image at a time, a progressive
// JPEG's coefficient bits and a WebP's pixels.
func Validate(b []byte) error {
	mt, kind := Detect(b)
	var err error
	switch mt {
	case TypePNG, TypeJPEG, TypeGIF, TypeWebP:
		err = validateImage(mt, b)
	case TypeWAV:
		err = validateWAV(b)
	case TypeMP3:
		err = validateMP3(b)
	case TypeOGG:
		err = validateOgg(b)
	case TypeFLAC:
		err = validateFLAC(b)
	case TypeM4A, TypeMP4, TypeQuickTime:
		err = validateMP4(b)
		if err == nil && kind == Audio {
			// Taken for audio (an M4A brand), it must have a sound track
			// of known length: a clone's sample is read as audio.
			_, err = mp4Audio(b)
		}
	case TypeWebM, TypeWebMAudio:
		err = validateWebM(b)
	case TypePDF:
		err = validatePDF(b)
	case TypeZIP:
		err = validateZIP(b)
	case TypeJSON:
		if !utf8.Valid(b) || !json.Valid(b) {
			err = errors.New("not valid JSON")
		}
	case TypeText:
		err = validateText(b)
	default:
		return errors.New("media: the bytes are not a file of an accepted type")
	}
	if err != nil {
		return fmt.Errorf("media: %s: %w", mt, err)
	}
	return nil
}

// validateText checks all of b, where Detect read its head: valid UTF-8
// without control characters but tab, newlines and form feed.
func validateText(b []byte) error {
	if !utf8.Valid(b) {
		return errors.New("not valid UTF-8 text")
	}
	for i, r := range string(b) {
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' && r != '\f' {
			return fmt.Errorf("a control character at byte %d: not text", i)
		}
	}
	return nil
}

// errTruncated is the common verdict on a file cut short.
var errTruncated = errors.New("truncated: the file ends before its data does")
