package media

import (
	"strings"

	"github.com/mediagen/mediagen-go/internal/mediatype"
)

// Canonical returns the canonical spelling of a declared media type:
// lower-cased, parameters removed, aliases resolved. The second result is
// false when the type is malformed or not accepted by the service. The list
// is internal/mediatype's, the one package upload checks against too.
func Canonical(contentType string) (string, bool) {
	mt, _, ok := mediatype.Canonical(contentType)
	return mt, ok
}

// Accepted reports whether a declared media type is one the service accepts
// for upload, and its kind. Parameters (such as "; charset=utf-8") are ignored
// and the comparison is case-insensitive.
//
// Accepted types, with their aliases in parentheses:
//
//	image:    image/png, image/jpeg, image/gif, image/webp
//	audio:    audio/wav (audio/x-wav, audio/wave, audio/vnd.wave),
//	          audio/mpeg (audio/mp3), audio/ogg (application/ogg), audio/flac (audio/x-flac),
//	          audio/mp4 (audio/x-m4a), audio/webm
//	video:    video/mp4, video/quicktime, video/webm
//	document: application/pdf, application/zip (application/x-zip-compressed),
//	          application/json, text/plain, text/markdown, text/csv
func Accepted(contentType string) (Kind, bool) {
	_, k, ok := mediatype.Canonical(contentType)
	if !ok {
		return Unknown, false
	}
	return k, true
}

// Compatible reports whether bytes that Detect classified as detected may be
// stored under the declared media type.
//
// The rules: the declared type must be accepted; aliases equal their
// canonical type; any accepted text/* type holds text/plain or JSON bytes;
// and a video container type (video/mp4, video/webm) may hold its audio-only
// variant, because files named .mp4 or .webm are labeled video by operating
// systems whatever their tracks. Everything else must match exactly, so a
// PNG declared but JPEG sent is refused.
func Compatible(declared, detected string) bool {
	d, ok := Canonical(declared)
	if !ok {
		return false
	}
	got, ok := Canonical(detected)
	if !ok {
		return false
	}
	if d == got {
		return true
	}
	if strings.HasPrefix(d, "text/") {
		return got == TypeText || got == TypeJSON
	}
	switch d {
	case TypeMP4:
		return got == TypeM4A
	case TypeWebM:
		return got == TypeWebMAudio
	}
	return false
}
