package media

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAccepted(t *testing.T) {
	for ct, want := range map[string]Kind{
		"image/png": Image, "IMAGE/JPEG": Image, "image/gif": Image, "image/webp": Image,
		"audio/wav": Audio, "audio/x-wav": Audio, "audio/wave": Audio, "audio/vnd.wave": Audio,
		"audio/mpeg": Audio, "audio/mp3": Audio, "audio/ogg; codecs=opus": Audio, "application/ogg": Audio,
		"audio/flac": Audio, "audio/x-flac": Audio, "audio/mp4": Audio, "audio/x-m4a": Audio, "audio/webm": Audio,
		"video/mp4": Video, "video/quicktime": Video, "video/webm;codecs=\"vp9,opus\"": Video,
		"application/pdf": Document, "application/zip": Document, "application/x-zip-compressed": Document,
		"application/json": Document, "text/plain; charset=utf-8": Document, "Text/Markdown": Document, "text/csv": Document,
	} {
		kind, ok := Accepted(ct)
		assert.True(t, ok, ct)
		assert.Equal(t, want, kind, ct)
	}
	for _, ct := range []string{
		"", "image/jpg", "image/svg+xml", "image/heic", "video/x-matroska", "audio/aac",
		"application/octet-stream", "text/html", "png", "image/", "text/plain; charset", "audio/wav extra",
	} {
		kind, ok := Accepted(ct)
		assert.False(t, ok, ct)
		assert.Equal(t, Unknown, kind, ct)
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"audio/x-wav":                    TypeWAV,
		"Audio/MP3":                      TypeMP3,
		"audio/x-m4a":                    TypeM4A,
		"application/x-zip-compressed":   TypeZIP,
		"text/plain; charset=ISO-8859-1": TypeText,
		"text/csv":                       "text/csv",
		"application/ogg":                TypeOGG,
	} {
		got, ok := Canonical(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	_, ok := Canonical("image/jpg")
	assert.False(t, ok)
}

func TestCompatible(t *testing.T) {
	for _, tc := range []struct {
		declared, detected string
		want               bool
	}{
		{"image/png", TypePNG, true},
		{"audio/x-wav", TypeWAV, true},
		{"AUDIO/WAVE; foo=bar", TypeWAV, true},
		{"audio/mp3", TypeMP3, true},
		{"text/plain", TypeText, true},
		{"text/plain", TypeJSON, true},
		{"text/markdown", TypeText, true},
		{"text/csv", TypeJSON, true},
		{"application/json", TypeJSON, true},
		{"video/mp4", TypeM4A, true},
		{"video/webm", TypeWebMAudio, true},

		{"image/png", TypeJPEG, false},
		{"application/json", TypeText, false},
		{"text/plain", TypePDF, false},
		{"audio/mp4", TypeMP4, false},
		{"audio/webm", TypeWebM, false},
		{"video/mp4", TypeQuickTime, false},
		{"image/jpg", TypeJPEG, false},
		{"image/png", TypeOctetStream, false},
		{"", "", false},
	} {
		assert.Equal(t, tc.want, Compatible(tc.declared, tc.detected), "%s vs %s", tc.declared, tc.detected)
	}
}
