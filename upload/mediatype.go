package upload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/mediagen/mediagen-go/internal/mediatype"
)

// sniffLen is how many leading bytes type detection reads, as
// net/http.DetectContentType does.
const sniffLen = 512

// textByExtension refines plain text detected from content into the text
// formats that content sniffing cannot tell apart. JSON is recognized from
// its content, so a .json name adds nothing.
var textByExtension = map[string]string{
	".md":       "text/markdown",
	".markdown": "text/markdown",
	".csv":      "text/csv",
}

// AcceptedTypes returns the media types the service accepts for upload, in
// canonical spelling, sorted. Calls refuse any other type before sending,
// with an error matching [ErrUnsupportedType].
//
// Aliases are accepted and sent in canonical form: audio/x-wav, audio/wave
// and audio/vnd.wave (audio/wav), audio/mp3 (audio/mpeg), audio/x-flac
// (audio/flac), audio/x-m4a (audio/mp4), application/ogg (audio/ogg) and
// application/x-zip-compressed (application/zip). Parameters such as
// "; charset=utf-8" are dropped.
func AcceptedTypes() []string { return mediatype.Accepted() }

// canonicalType returns the canonical, accepted spelling of contentType, or
// an error matching ErrUnsupportedType.
func canonicalType(contentType string) (string, error) {
	mt, ok := mediatype.Resolve(contentType)
	if !ok {
		return "", fmt.Errorf("%w: %q is not a media type", ErrUnsupportedType, contentType)
	}
	if _, _, ok := mediatype.Canonical(mt); !ok {
		return "", fmt.Errorf("%w: %s (accepted: %s)", ErrUnsupportedType, mt, strings.Join(AcceptedTypes(), ", "))
	}
	return mt, nil
}

// detectType names the media type of content from its first bytes, using
// net/http.DetectContentType plus the few signatures it misses (FLAC, M4A,
// QuickTime, MP3 without an ID3 tag, JSON). name, when not empty, only
// refines plain text into Markdown or CSV; it never overrides what the bytes
// say. The result is canonical but not necessarily accepted.
func detectType(head []byte, name string) string {
	mt := sniff(head)
	if mt == "text/plain" && name != "" {
		if t, ok := textByExtension[strings.ToLower(filepath.Ext(name))]; ok {
			mt = t
		}
	}
	return mt
}

func sniff(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("fLaC")):
		return "audio/flac"
	case len(head) >= 12 && string(head[4:8]) == "ftyp":
		switch string(head[8:12]) {
		case "M4A ", "M4B ", "M4P ":
			return "audio/mp4"
		case "qt  ":
			return "video/quicktime"
		}
	case isMPEGAudioFrame(head):
		return "audio/mpeg"
	}
	mt, _, err := mime.ParseMediaType(http.DetectContentType(head))
	if err != nil {
		return "application/octet-stream"
	}
	if c, ok := mediatype.Resolve(mt); ok {
		mt = c
	}
	if mt == "text/plain" && looksLikeJSON(head) {
		return "application/json"
	}
	return mt
}

// isMPEGAudioFrame recognizes an MP3 that starts with a frame header rather
// than an ID3 tag: 11 sync bits, then a layer other than "reserved".
func isMPEGAudioFrame(b []byte) bool {
	return len(b) >= 4 && b[0] == 0xFF && b[1]&0xE0 == 0xE0 && b[1]&0x06 != 0 && b[2]&0xF0 != 0xF0
}

// looksLikeJSON reports whether head is the start of a JSON object or array:
// it must tokenize cleanly up to its end, which may cut a value short.
func looksLikeJSON(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n")
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(t))
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
