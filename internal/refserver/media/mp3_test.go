package media

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseMPEGFrame(t *testing.T) {
	for name, tc := range map[string]struct {
		h                     []byte
		length, samples, rate int
		mpeg1, mono           bool
	}{
		"mpeg1 layer I 384k":       {[]byte{0xff, 0xff, 0xc0, 0x00}, 416, 384, 44100, true, false},
		"mpeg1 layer II 192k":      {[]byte{0xff, 0xfd, 0xa4, 0x00}, 576, 1152, 48000, true, false},
		"mpeg1 layer III 128k":     {[]byte{0xff, 0xfb, 0x90, 0x00}, 417, 1152, 44100, true, false},
		"mpeg2 layer III pad mono": {[]byte{0xff, 0xf3, 0x82, 0xc0}, 209, 576, 22050, false, true},
		"mpeg2.5 layer III 8k":     {[]byte{0xff, 0xe3, 0x18, 0x00}, 72, 576, 8000, false, false},
		"mpeg2 layer I 32k":        {[]byte{0xff, 0xf7, 0x14, 0x00}, 64, 384, 24000, false, false},
	} {
		f, ok := parseMPEGFrame(tc.h)
		if assert.True(t, ok, name) {
			assert.Equal(t, mpegFrame{tc.length, tc.samples, tc.rate, tc.mpeg1, tc.mono}, f, name)
		}
	}
	for name, h := range map[string][]byte{
		"short":            {0xff, 0xfb, 0x90},
		"no sync":          {0xfe, 0xfb, 0x90, 0x00},
		"reserved version": {0xff, 0xeb, 0x90, 0x00},
		"reserved layer":   {0xff, 0xf9, 0x90, 0x00},
		"free bitrate":     {0xff, 0xfb, 0x00, 0x00},
		"bad bitrate":      {0xff, 0xfb, 0xf0, 0x00},
		"reserved rate":    {0xff, 0xfb, 0x9c, 0x00},
	} {
		_, ok := parseMPEGFrame(h)
		assert.False(t, ok, name)
	}
}

func TestSkipID3v2(t *testing.T) {
	assert.Equal(t, []byte("rest"), skipID3v2(cat(id3Tag(5), id3Tag(0), []byte("rest"))), "consecutive tags")

	footer := id3Tag(3)
	footer[5] = 0x10
	assert.Equal(t, []byte("x"), skipID3v2(cat(footer, make([]byte, 10), []byte("x"))), "footer skipped")

	notSynchsafe := cat([]byte("ID3\x04\x00\x00\x80\x00\x00\x00"), []byte("rest"))
	assert.Equal(t, notSynchsafe, skipID3v2(notSynchsafe), "not a tag: left alone")

	assert.Empty(t, skipID3v2(id3Tag(100)[:20]), "tag longer than the file")
}
