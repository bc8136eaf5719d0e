package mediatest

import (
	"bytes"
	"image"
	"image/gif"
	_ "image/jpeg"
	_ "image/png"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "golang.org/x/image/webp"
)

// Small instances of each builder decode, with the decoders the validators
// trust, to an image of the size announced.
func TestBuildersMakeFilesThatDecode(t *testing.T) {
	for name, b := range map[string][]byte{
		"png rgba16 interlaced": PNG(101, 67, RGBA, 16, true),
		"png gray1":             PNG(101, 67, Gray, 1, false),
		"png rgb8 interlaced":   PNG(101, 67, RGB, 8, true),
		"progressive jpeg":      ProgressiveJPEG(101, 67),
		"gif":                   GIF(101, 67, 1),
		"lossless webp":         LosslessWebP(101, 67),
	} {
		img, _, err := image.Decode(bytes.NewReader(b))
		require.NoError(t, err, name)
		assert.Equal(t, image.Rect(0, 0, 101, 67), img.Bounds(), name)
	}
	for _, w := range []int{1, 7, 8, 9, 4000} { // runs of every length class
		_, _, err := image.Decode(bytes.NewReader(ProgressiveJPEG(w, 9)))
		require.NoError(t, err, w)
	}
	anim, err := gif.DecodeAll(bytes.NewReader(GIF(20, 10, 3)))
	require.NoError(t, err)
	assert.Len(t, anim.Image, 3)
}

func TestWAV(t *testing.T) {
	assert.Len(t, WAV(1, 20), 64, "the 64-byte WAV of the issue")
}

func TestTinyInterlacedPNG(t *testing.T) {
	img, _, err := image.Decode(bytes.NewReader(PNG(3, 2, RGB, 8, true)))
	require.NoError(t, err, "passes without pixels are left out")
	assert.Equal(t, image.Rect(0, 0, 3, 2), img.Bounds())
}
