package media

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPNGDecodesToAskedSize(t *testing.T) {
	for _, tc := range []struct{ w, h int }{{64, 64}, {256, 128}, {1, 1}, {3, 200}} {
		b := PNG(tc.w, tc.h, "seed")
		img, err := png.Decode(bytes.NewReader(b))
		require.NoError(t, err)
		assert.Equal(t, tc.w, img.Bounds().Dx())
		assert.Equal(t, tc.h, img.Bounds().Dy())

		w, h, err := ImageConfig(b)
		require.NoError(t, err)
		assert.Equal(t, [2]int{tc.w, tc.h}, [2]int{w, h})
	}
}

func TestPNGDeterministicAndSeeded(t *testing.T) {
	a := PNG(64, 64, "gen-1")
	assert.Equal(t, a, PNG(64, 64, "gen-1"), "same inputs, same bytes")
	assert.NotEqual(t, a, PNG(64, 64, "gen-2"), "another seed looks different")
}

func TestPNGClampsSize(t *testing.T) {
	w, h, err := ImageConfig(PNG(0, -7, ""))
	require.NoError(t, err)
	assert.Equal(t, [2]int{1, 1}, [2]int{w, h})

	w, h, err = ImageConfig(PNG(MaxImageSide+100, 1, ""))
	require.NoError(t, err)
	assert.Equal(t, [2]int{MaxImageSide, 1}, [2]int{w, h})
}
