package media

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestImageConfig(t *testing.T) {
	for name, tc := range map[string]struct {
		b    []byte
		w, h int
	}{
		"png":        {PNG(70, 30, ""), 70, 30},
		"jpeg":       {jpegSample(t, 33, 17), 33, 17},
		"gif":        {gifSample(t, 5, 9), 5, 9},
		"webp VP8":   {webpVP8(640, 480), 640, 480},
		"webp VP8L":  {webpVP8L(16383, 1), 16383, 1},
		"webp VP8X":  {webpVP8X(1<<24, 3), 1 << 24, 3},
		"VP8 scaled": {webpVP8(0xc000|100, 0x4000|50), 100, 50}, // top bits are scale hints
	} {
		w, h, err := ImageConfig(tc.b)
		require.NoError(t, err, name)
		assert.Equal(t, [2]int{tc.w, tc.h}, [2]int{w, h}, name)
	}
}

func TestImageConfigRejectsNonImages(t *testing.T) {
	png := PNG(8, 8, "")
	badVP8 := webpVP8(8, 8)
	badVP8[23] = 0 // break the start code
	for name, b := range map[string][]byte{
		"empty":           nil,
		"text":            []byte("not an image"),
		"wav":             WAV(time.Second, ""),
		"truncated png":   png[:12],
		"truncated jpeg":  jpegSample(t, 8, 8)[:4],
		"bad VP8":         badVP8,
		"VP8 zero size":   webpVP8(0, 8),
		"VP8 inter frame": webpSample("VP8 ", []byte{0x11, 0, 0, 0x9d, 0x01, 0x2a, 8, 0, 8, 0}),
		"bad VP8L":        webpSample("VP8L", []byte{0x2e, 0, 0, 0, 0}),
		"short VP8X":      webpSample("VP8X", []byte{0, 0}),
		"unknown chunk":   webpSample("ALPH", []byte{0, 0}),
		"short webp":      cat([]byte("RIFF"), le32(8), []byte("WEBPVP8 ")),
		"VP8L empty":      webpSample("VP8L", nil),
	} {
		_, _, err := ImageConfig(b)
		assert.Error(t, err, name)
	}
}
