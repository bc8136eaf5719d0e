package media

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"unicode"
	"unicode/utf8"

	"github.com/mediagen/mediagen-go/internal/mediatype"
)

// Detect identifies media from its leading bytes (never from a file name)
// and returns the canonical media type and its kind. Unrecognized bytes give
// TypeOctetStream and Unknown; so do formats the service does not accept,
// such as Matroska (non-WebM), HEIF/AVIF or AAC in ADTS.
//
// Containers are looked into only as far as needed: ISO BMFF files are
// audio/mp4 when the brand says M4A/M4B or the movie has sound but no video
// track; WebM is audio/webm only when its Tracks hold no video track.
func Detect(b []byte) (mediaType string, kind Kind) {
	mt := detectType(b)
	if _, k, ok := mediatype.Canonical(mt); ok {
		return mt, k
	}
	return TypeOctetStream, Unknown
}

// detectType returns the canonical type or TypeOctetStream.
func detectType(b []byte) string {
	has := func(prefix string) bool { return bytes.HasPrefix(b, []byte(prefix)) }
	switch {
	case has("\x89PNG\r\n\x1a\n"):
		return TypePNG
	case has("\xff\xd8\xff"):
		return TypeJPEG
	case has("GIF87a"), has("GIF89a"):
		return TypeGIF
	case has("RIFF") && len(b) >= 12 && string(b[8:12]) == "WEBP":
		return TypeWebP
	case has("RIFF") && len(b) >= 12 && string(b[8:12]) == "WAVE":
		return TypeWAV
	case has("fLaC"):
		return TypeFLAC
	case has("OggS"):
		return TypeOGG
	case has("%PDF-"):
		return TypePDF
	case has("PK\x03\x04"), has("PK\x05\x06"), has("PK\x07\x08"):
		return TypeZIP
	case has("\x1a\x45\xdf\xa3"):
		return webmType(b)
	case len(b) >= 12 && string(b[4:8]) == "ftyp":
		return ftypType(b)
	case isQuickTime(b):
		return TypeQuickTime
	case has("ID3"):
		return TypeMP3
	}
	if _, ok := parseMPEGFrame(b); ok {
		return TypeMP3
	}
	return textType(b)
}

// webmType tells WebM video from WebM audio by its track types.
func webmType(b []byte) string {
	w, err := parseWebM(b)
	if err != nil || w.docType != "webm" {
		return TypeOctetStream
	}
	if w.tracksSeen && w.audio && !w.video {
		return TypeWebMAudio
	}
	return TypeWebM
}

// ftypType classifies an ISO BMFF file by its major brand, then by tracks.
func ftypType(b []byte) string {
	switch string(b[8:12]) {
	case "M4A ", "M4B ", "M4P ", "F4A ", "F4B ":
		return TypeM4A
	case "qt  ":
		return TypeQuickTime
	case "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1", "avif", "avis", "crx ":
		return TypeOctetStream // HEIF/AVIF still images and camera raw: not accepted
	}
	m, err := parseMovie(b)
	if err != nil {
		return TypeMP4
	}
	sound := false
	for _, t := range m.tracks {
		switch t.handler {
		case "vide":
			return TypeMP4
		case "soun":
			sound = true
		}
	}
	if sound {
		return TypeM4A
	}
	return TypeMP4
}

// isQuickTime recognizes old QuickTime files that start with a movie-level
// atom instead of ftyp; the size check keeps text such as "I'm free" out.
func isQuickTime(b []byte) bool {
	if len(b) < 8 {
		return false
	}
	switch string(b[4:8]) {
	case "moov", "mdat", "wide", "free", "skip", "pnot":
	default:
		return false
	}
	size := binary.BigEndian.Uint32(b)
	return size == 0 || size == 1 || (size >= 8 && uint64(size) <= uint64(len(b)))
}

// textType returns JSON for a valid JSON object or array, text/plain for
// other UTF-8 without control characters (tab, newlines and form feed
// allowed), else TypeOctetStream. Empty input is not text: nothing to store.
func textType(b []byte) string {
	if len(b) == 0 || !utf8.Valid(b) {
		return TypeOctetStream
	}
	for _, r := range string(b) {
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' && r != '\f' {
			return TypeOctetStream
		}
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(b) {
		return TypeJSON
	}
	return TypeText
}
