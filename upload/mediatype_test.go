package upload

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/mediatype"
)

// Leading bytes of one sample of each accepted kind.
var (
	headPNG   = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	headJPEG  = "\xff\xd8\xff\xe0\x00\x10JFIF\x00"
	headGIF   = "GIF89a\x01\x00\x01\x00"
	headWebP  = "RIFF\x24\x00\x00\x00WEBPVP8 "
	headWAV   = "RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00"
	headMP3   = "ID3\x04\x00\x00\x00\x00\x00\x00"
	headMP3F  = "\xff\xfb\x90\x64\x00\x00\x00\x00"
	headOGG   = "OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00"
	headFLAC  = "fLaC\x00\x00\x00\x22"
	headM4A   = "\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00M4A mp42isom\x00\x00\x00\x00"
	headMP4   = "\x00\x00\x00\x1cftypisom\x00\x00\x02\x00isomiso2mp41"
	headMOV   = "\x00\x00\x00\x14ftypqt  \x00\x00\x02\x00qt  "
	headWebM  = "\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01"
	headPDF   = "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
	headZIP   = "PK\x03\x04\x14\x00\x00\x00\x08\x00"
	headJSON  = `{"prompt": "a red fox", "tags": ["a", "b"]}`
	headText  = "A plain note about the logo.\n"
	headHTML  = "<!DOCTYPE html><html><body>hi</body></html>"
	headBytes = "\x00\x01\x02\x03\x04\x05\x06\x07"
)

func TestDetectType(t *testing.T) {
	longJSON := "[" + strings.Repeat(`{"k": "value"}, `, 60) // cut short past 512 bytes
	tests := []struct {
		name, head, file, want string
	}{
		{"png", headPNG, "", "image/png"},
		{"jpeg", headJPEG, "", "image/jpeg"},
		{"gif", headGIF, "", "image/gif"},
		{"webp", headWebP, "", "image/webp"},
		{"wav", headWAV, "", "audio/wav"},
		{"mp3 with ID3", headMP3, "", "audio/mpeg"},
		{"mp3 frame", headMP3F, "", "audio/mpeg"},
		{"ogg", headOGG, "", "audio/ogg"},
		{"flac", headFLAC, "", "audio/flac"},
		{"m4a", headM4A, "", "audio/mp4"},
		{"mp4", headMP4, "", "video/mp4"},
		{"quicktime", headMOV, "", "video/quicktime"},
		{"webm", headWebM, "", "video/webm"},
		{"pdf", headPDF, "", "application/pdf"},
		{"zip", headZIP, "", "application/zip"},
		{"json", headJSON, "", "application/json"},
		{"json cut at the sniff length", longJSON[:mediatype.SniffLen], "", "application/json"},
		{"text", headText, "", "text/plain"},
		{"text that starts like JSON", "[see the notes] below", "", "text/plain"},
		{"markdown by extension", "# Title\n\nBody\n", "notes.MD", "text/markdown"},
		{"csv by extension", "a,b\n1,2\n", "table.csv", "text/csv"},
		{"a .json name does not make text JSON", "not json at all", "args.json", "text/plain"},
		{"extension never overrides content", headPNG, "notes.md", "image/png"},
		{"name alone does not make a PNG", headText, "logo.png", "text/plain"},
		{"html", headHTML, "", "text/html"},
		{"unknown bytes", headBytes, "", "application/octet-stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, detectType([]byte(tt.head), int64(len(tt.head)), tt.file))
		})
	}
}

func TestCanonicalType(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"image/png", "image/png"},
		{"IMAGE/PNG", "image/png"},
		{"text/plain; charset=utf-8", "text/plain"},
		{"audio/x-wav", "audio/wav"},
		{"audio/wave", "audio/wav"},
		{"audio/mp3", "audio/mpeg"},
		{"audio/x-m4a", "audio/mp4"},
		{"application/ogg", "audio/ogg"},
		{"application/x-zip-compressed", "application/zip"},
		{"video/quicktime", "video/quicktime"},
	}
	for _, tt := range tests {
		got, err := canonicalType(tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
	for _, bad := range []string{"", "image/jpg", "text/html", "application/octet-stream", "image/heic", "not a type;;"} {
		_, err := canonicalType(bad)
		assert.ErrorIs(t, err, ErrUnsupportedType, bad)
	}
}

func TestAcceptedTypes(t *testing.T) {
	types := AcceptedTypes()
	assert.IsNonDecreasing(t, types)
	for _, want := range []string{"image/png", "audio/flac", "video/webm", "application/pdf", "application/json", "text/plain"} {
		assert.Contains(t, types, want)
	}
	assert.NotContains(t, types, "application/ogg", "an alias, sent as audio/ogg")
	for _, ct := range types {
		got, err := canonicalType(ct)
		require.NoError(t, err)
		assert.Equal(t, ct, got, "every accepted type is canonical")
	}
}
