// Package mediatype is the one list of media types the service accepts for
// upload, with their other spellings in use, and the one content sniffer,
// shared by package upload and the reference server.
package mediatype

import (
	"maps"
	"mime"
	"slices"
	"strings"
)

// Kind is the broad class of an accepted type.
type Kind string

// The kinds of accepted files.
const (
	Image    Kind = "image"
	Audio    Kind = "audio"
	Video    Kind = "video"
	Document Kind = "document"
)

// accepted maps every accepted canonical type to its kind; a test keeps it
// in step with the contract's x-accepted-media-types.
var accepted = map[string]Kind{
	"image/png": Image, "image/jpeg": Image, "image/gif": Image, "image/webp": Image,
	"audio/wav": Audio, "audio/mpeg": Audio, "audio/ogg": Audio, "audio/flac": Audio,
	"audio/mp4": Audio, "audio/webm": Audio,
	"video/mp4": Video, "video/quicktime": Video, "video/webm": Video,
	"application/pdf": Document, "application/zip": Document, "application/json": Document,
	"text/plain": Document, "text/markdown": Document, "text/csv": Document,
}

// aliases maps other spellings in real use (browsers, operating systems,
// net/http.DetectContentType) to the canonical type; invented ones such as
// image/jpg are left out.
var aliases = map[string]string{
	"audio/x-wav":                  "audio/wav",
	"audio/wave":                   "audio/wav",
	"audio/vnd.wave":               "audio/wav",
	"audio/mp3":                    "audio/mpeg",
	"audio/x-flac":                 "audio/flac",
	"audio/x-m4a":                  "audio/mp4",
	"application/ogg":              "audio/ogg",
	"application/x-zip-compressed": "application/zip",
}

// Accepted returns the accepted canonical types, sorted.
func Accepted() []string { return slices.Sorted(maps.Keys(accepted)) }

// Resolve lower-cases contentType, drops its parameters and maps an alias
// to its canonical spelling; ok is false only for a malformed type.
func Resolve(contentType string) (string, bool) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", false
	}
	mt = strings.ToLower(mt)
	if c, ok := aliases[mt]; ok {
		mt = c
	}
	return mt, true
}

// Canonical returns the canonical spelling of an accepted type and its kind;
// ok is false when contentType is malformed or not accepted.
func Canonical(contentType string) (string, Kind, bool) {
	mt, ok := Resolve(contentType)
	if !ok {
		return "", "", false
	}
	k, ok := accepted[mt]
	if !ok {
		return "", "", false
	}
	return mt, k, true
}
