package mediatype

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"unicode"
	"unicode/utf8"
)

// SniffLen is how many leading bytes Sniff reads, as
// net/http.DetectContentType does.
const SniffLen = 512

// OctetStream is what Sniff returns for bytes it does not recognize.
const OctetStream = "application/octet-stream"

// Sniff names the media type of content b (whole, or its first SniffLen
// bytes) from its bytes alone. The answer is canonical but not always
// accepted: HTML and XML are named so they are refused; unknown bytes,
// HEIF/AVIF and ADTS AAC are OctetStream. Containers go by signature (any
// EBML is video/webm, ISO BMFF is audio/mp4 only by an M4A brand).
func Sniff(b []byte) string { return SniffHead(b, int64(len(b))) }

// SniffHead is Sniff for a head read from content of size bytes, against
// which a QuickTime atom's length is judged.
func SniffHead(b []byte, size int64) string {
	head := b[:min(len(b), SniffLen)]
	has := func(prefix string) bool { return bytes.HasPrefix(head, []byte(prefix)) }
	riff := func(form string) bool { return has("RIFF") && len(head) >= 12 && string(head[8:12]) == form }
	switch {
	case has("\x89PNG\r\n\x1a\n"):
		return "image/png"
	case has("\xff\xd8\xff"):
		return "image/jpeg"
	case has("GIF87a"), has("GIF89a"):
		return "image/gif"
	case riff("WEBP"):
		return "image/webp"
	case riff("WAVE"):
		return "audio/wav"
	case has("fLaC"):
		return "audio/flac"
	case has("OggS"):
		return "audio/ogg"
	case has("%PDF-"):
		return "application/pdf"
	case has("PK\x03\x04"), has("PK\x05\x06"), has("PK\x07\x08"):
		return "application/zip"
	case has("\x1a\x45\xdf\xa3"):
		return "video/webm"
	case len(head) >= 12 && string(head[4:8]) == "ftyp":
		switch string(head[8:12]) {
		case "M4A ", "M4B ", "M4P ", "F4A ", "F4B ":
			return "audio/mp4"
		case "qt  ":
			return "video/quicktime"
		case "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1", "avif", "avis", "crx ":
			return OctetStream // HEIF/AVIF still images and camera raw: not accepted
		}
		return "video/mp4"
	case isQuickTime(head, size):
		return "video/quicktime"
	case has("ID3"), isMPEGFrame(head):
		return "audio/mpeg"
	}
	return textType(head, len(b) >= SniffLen)
}

// isQuickTime recognizes old QuickTime files that start with a movie-level
// atom; the size check against the content's length n keeps text such as
// "I'm free" out.
func isQuickTime(b []byte, n int64) bool {
	if len(b) < 8 {
		return false
	}
	switch string(b[4:8]) {
	case "moov", "mdat", "wide", "free", "skip", "pnot":
	default:
		return false
	}
	size := binary.BigEndian.Uint32(b)
	return size == 0 || size == 1 || (size >= 8 && uint64(size) <= uint64(n))
}

// isMPEGFrame recognizes an MP3 that starts with a frame header rather
// than an ID3 tag: 11 sync bits, and no reserved version, layer, bitrate
// or sample rate.
func isMPEGFrame(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	h := binary.BigEndian.Uint32(b)
	br := h >> 12 & 0xf
	return h>>21 == 0x7ff && h>>19&3 != 1 && h>>17&3 != 0 && br != 0 && br != 15 && h>>10&3 != 3
}

// textType names text: JSON for an object or array, HTML and XML as
// net/http.DetectContentType does, text/plain for other non-empty UTF-8
// without controls but tab, newlines and form feed, else OctetStream. A
// head cut from longer content may end in a cut rune or cut JSON.
func textType(head []byte, cut bool) string {
	if cut {
		head = trimCutRune(head)
	}
	if len(head) == 0 || !utf8.Valid(head) {
		return OctetStream
	}
	for _, r := range string(head) {
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' && r != '\f' {
			return OctetStream
		}
	}
	if t := bytes.TrimLeft(head, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		if (!cut && json.Valid(head)) || (cut && jsonUpToCut(t)) {
			return "application/json"
		}
	}
	if mt, _, _ := mime.ParseMediaType(http.DetectContentType(head)); mt == "text/html" || mt == "text/xml" {
		return mt
	}
	return "text/plain"
}

// trimCutRune drops the bytes of a rune cut short at the end of b.
func trimCutRune(b []byte) []byte {
	for i := len(b) - 1; i >= max(0, len(b)-utf8.UTFMax+1); i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// jsonUpToCut reports whether b tokenizes as JSON up to its end, which may
// cut a value short.
func jsonUpToCut(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		_, err := dec.Token()
		switch {
		case err == nil:
			continue
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return true
		default:
			return false
		}
	}
}
