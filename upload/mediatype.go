package upload

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mediagen/mediagen-go/internal/mediatype"
)

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

// detectType names the media type of content of size bytes from its first
// bytes with the sniffer the service uses. name, when not empty, only
// refines plain text into Markdown or CSV; it never overrides what the
// bytes say. The result is canonical but not necessarily accepted.
func detectType(head []byte, size int64, name string) string {
	mt := mediatype.SniffHead(head, size)
	if mt == "text/plain" && name != "" {
		if t, ok := textByExtension[strings.ToLower(filepath.Ext(name))]; ok {
			mt = t
		}
	}
	return mt
}
