package upload

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mediagen/mediagen-go/internal/mediatype"
)

// textByExtension refines sniffed plain text into formats sniffing cannot
// tell apart (JSON it can).
var textByExtension = map[string]string{
	".md":       "text/markdown",
	".markdown": "text/markdown",
	".csv":      "text/csv",
}

// AcceptedTypes returns the media types the service accepts, canonical and
// sorted; others fail with [ErrUnsupportedType]. Aliases (audio/x-wav,
// audio/mp3...) are sent canonical, without parameters.
func AcceptedTypes() []string { return mediatype.Accepted() }

// canonicalType returns the canonical, accepted spelling of contentType.
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

// detectType sniffs the media type of content as the service does; name
// only refines plain text. The result may not be accepted.
func detectType(head []byte, size int64, name string) string {
	mt := mediatype.SniffHead(head, size)
	if mt == "text/plain" && name != "" {
		if t, ok := textByExtension[strings.ToLower(filepath.Ext(name))]; ok {
			mt = t
		}
	}
	return mt
}
