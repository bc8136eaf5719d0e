package media

import (
	"mime"
	"strings"
)

// acceptedKinds maps every accepted canonical media type to its kind.
var acceptedKinds = map[string]Kind{
	TypePNG:         Image,
	TypeJPEG:        Image,
	TypeGIF:         Image,
	TypeWebP:        Image,
	TypeWAV:         Audio,
	TypeMP3:         Audio,
	TypeOGG:         Audio,
	TypeFLAC:        Audio,
	TypeM4A:         Audio,
	TypeWebMAudio:   Audio,
	TypeMP4:         Video,
	TypeQuickTime:   Video,
	TypeWebM:        Video,
	TypePDF:         Document,
	TypeZIP:         Document,
	TypeJSON:        Document,
	TypeText:        Document,
	"text/markdown": Document,
	"text/csv":      Document,
}

// aliases maps other spellings clients really send to the canonical type.
// Only names in actual use by browsers and operating systems are listed;
// invented ones such as image/jpg are deliberately refused.
var aliases = map[string]string{
	"audio/x-wav":                  TypeWAV,
	"audio/wave":                   TypeWAV,
	"audio/vnd.wave":               TypeWAV,
	"audio/mp3":                    TypeMP3,
	"audio/x-flac":                 TypeFLAC,
	"audio/x-m4a":                  TypeM4A,
	"application/x-zip-compressed": TypeZIP,
}

// Canonical returns the canonical spelling of a declared media type:
// lower-cased, parameters removed, aliases resolved. The second result is
// false when the type is malformed or not accepted by the service.
func Canonical(contentType string) (string, bool) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", false
	}
	mt = strings.ToLower(mt)
	if c, ok := aliases[mt]; ok {
		mt = c
	}
	if _, ok := acceptedKinds[mt]; !ok {
		return "", false
	}
	return mt, true
}

// Accepted reports whether a declared media type is one the service accepts
// for upload, and its kind. Parameters (such as "; charset=utf-8") are ignored
// and the comparison is case-insensitive.
//
// Accepted types, with their aliases in parentheses:
//
//	image:    image/png, image/jpeg, image/gif, image/webp
//	audio:    audio/wav (audio/x-wav, audio/wave, audio/vnd.wave),
//	          audio/mpeg (audio/mp3), audio/ogg, audio/flac (audio/x-flac),
//	          audio/mp4 (audio/x-m4a), audio/webm
//	video:    video/mp4, video/quicktime, video/webm
//	document: application/pdf, application/zip (application/x-zip-compressed),
//	          application/json, text/plain, text/markdown, text/csv
func Accepted(contentType string) (Kind, bool) {
	mt, ok := Canonical(contentType)
	if !ok {
		return Unknown, false
	}
	return acceptedKinds[mt], true
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
