package media

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mediagen/mediagen-go/internal/refserver/media/mediatest"
)

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hostileSide makes a square just under MaxImagePixels.
const hostileSide = 7071

func TestHostileImagesAreCheckedInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and checks 200 megapixels of images")
	}
	for name, b := range map[string][]byte{
		"16-bit RGBA interlaced PNG": mediatest.PNG(hostileSide, hostileSide, mediatest.RGBA, 16, true),
		"progressive 4:4:4 JPEG":     mediatest.ProgressiveJPEG(hostileSide, hostileSide),
		"GIF of 8 frames":            mediatest.GIF(hostileSide, hostileSide, 8),
		"lossless WebP":              mediatest.LosslessWebP(hostileSide, hostileSide),
	} {
		var err error
		n := allocated(func() { err = Validate(b) })
		t.Logf("%s: %d KB file, %d MB allocated, verdict %v", name, len(b)>>10, n>>20, err)
		assert.Less(t, n, uint64(32<<20), name)
	}
}

func TestWebPIsDecodedWithinItsBudget(t *testing.T) {
	assert.NoError(t, Validate(mediatest.LosslessWebP(2000, 2000)), "7 bytes a pixel: 28 MB")
	assert.ErrorContains(t, Validate(mediatest.LosslessWebP(4000, 4000)), "over the 96 MB")
}

// Each scan of a progressive JPEG goes through every block of its
// components, and an end-of-band run codes 32767 of them in two bytes:
// the number of scans bounds the time a check takes.
func TestJPEGScansAreBounded(t *testing.T) {
	b := mediatest.ProgressiveJPEGScans(hostileSide, hostileSide, 2000)
	start := time.Now()
	err := Validate(b)
	t.Logf("%d KB, %d scans: %v in %v", len(b)>>10, 2+3*2001, err, time.Since(start))
	assert.ErrorContains(t, err, "scans")
}
