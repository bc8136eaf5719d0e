package mediatype_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mediagen/mediagen-go/internal/mediatype"
)

// The sniffer's rules for a head cut from longer content, which package
// upload passes, against whole content, which the reference server passes.
func TestSniffHeadOrWhole(t *testing.T) {
	long := strings.Repeat("é", mediatype.SniffLen) // 2 bytes a rune: the head cuts none
	cutRune := "a" + long                           // the head ends inside a rune
	for _, tc := range []struct{ name, b, want string }{
		{"a rune cut at the head's end is text", cutRune, "text/plain"},
		{"content of SniffLen bytes is read as a head", cutRune[:mediatype.SniffLen], "text/plain"},
		{"short content with a cut rune", "ab\xc3", mediatype.OctetStream},
		{"JSON cut by the head", "[" + strings.Repeat(`"x", `, 200), "application/json"},
		{"whole JSON cut short is text", `{"a":`, "text/plain"},
		{"a control character past the head is not seen", "text" + strings.Repeat(" ", mediatype.SniffLen) + "\x00", "text/plain"},
		{"html", "<!DOCTYPE html><p>hi</p>", "text/html"},
		{"xml", `<?xml version="1.0"?><a/>`, "text/xml"},
		{"quicktime box within the content", "\x00\x00\x00\x08free", "video/quicktime"},
		{"quicktime-looking text", "I'm free to go", "text/plain"},
		{"m4a brand", "\x00\x00\x00\x14ftypM4A \x00\x00\x00\x00", "audio/mp4"},
		{"avif", "\x00\x00\x00\x14ftypavif\x00\x00\x00\x00", mediatype.OctetStream},
		{"mpeg frame", "\xff\xfb\x90\x64", "audio/mpeg"},
		{"aac adts", "\xff\xf1\x50\x80", mediatype.OctetStream},
		{"free bitrate mpeg", "\xff\xfb\x00\x00", mediatype.OctetStream},
	} {
		assert.Equal(t, tc.want, mediatype.Sniff([]byte(tc.b)), tc.name)
	}
}

// A head cut from a longer QuickTime file is judged by the file's size.
func TestSniffHeadQuickTimeAtomPastTheHead(t *testing.T) {
	mov := make([]byte, 2048)
	copy(mov, "\x00\x00\x04\x00moov")
	assert.Equal(t, "video/quicktime", mediatype.Sniff(mov))
	assert.Equal(t, "video/quicktime", mediatype.SniffHead(mov[:mediatype.SniffLen], int64(len(mov))))
	assert.Equal(t, mediatype.OctetStream, mediatype.SniffHead(mov[:mediatype.SniffLen], mediatype.SniffLen), "an atom longer than the content")
}
