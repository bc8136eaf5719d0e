package media

import (
	"bytes"
	"errors"
	"fmt"
	"go/build"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/refserver/media/mediatest"
)

// The checkers of PNG, JPEG and GIF stand in for image/png, image/jpeg and
// image/gif: what one refuses, the other must. These tests and the fuzz
// targets below hold them to it on real files and on their mutations.

// decoderVerdict decodes b with the standard library, every frame of a GIF,
// unless its header announces more than 4 megapixels (nil, false).
func decoderVerdict(mt string, b []byte) (error, bool) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err == nil && cfg.Width*cfg.Height > 1<<22 {
		return nil, false
	}
	switch mt {
	case TypePNG:
		_, err = png.Decode(bytes.NewReader(b))
	case TypeJPEG:
		_, err = jpeg.Decode(bytes.NewReader(b))
	case TypeGIF:
		_, err = gif.DecodeAll(bytes.NewReader(b))
	default:
		return nil, false
	}
	return err, true
}

// checkerVerdict runs the checker of mt on b.
func checkerVerdict(mt string, b []byte) error {
	switch mt {
	case TypePNG:
		return checkPNG(b)
	case TypeJPEG:
		return checkJPEG(b, nil)
	case TypeGIF:
		return checkGIF(b)
	}
	return fmt.Errorf("no checker for %s", mt)
}

// requireSameVerdict checks that the checker and the decoder agree on b.
func requireSameVerdict(t testing.TB, mt string, b []byte, what string) {
	t.Helper()
	want, ok := decoderVerdict(mt, b)
	if !ok {
		return
	}
	got := checkerVerdict(mt, b)
	if errors.Is(got, errJPEGScans) {
		return // image/jpeg reads any number of scans, however long it takes
	}
	require.Equal(t, want == nil, got == nil, "%s: the decoder says %v, the checker %v", what, want, got)
}

// goImages returns the PNG, JPEG and GIF files of the Go distribution's
// image tests (the PNG suite among them), keyed by name, and skips t
// when they are not installed.
func goImages(t testing.TB) map[string][]byte {
	t.Helper()
	out := goImageFiles(t)
	if len(out) == 0 {
		t.Skip("the Go distribution's image test files are not installed")
	}
	return out
}

// goImageFiles is goImages without the skip: empty when they are missing.
func goImageFiles(t testing.TB) map[string][]byte {
	t.Helper()
	dir := filepath.Join(build.Default.GOROOT, "src", "image")
	out := map[string][]byte{}
	for _, pattern := range []string{"testdata/*", "png/testdata/*.png", "png/testdata/pngsuite/*.png"} {
		names, err := filepath.Glob(filepath.Join(dir, pattern))
		require.NoError(t, err)
		for _, name := range names {
			switch filepath.Ext(name) {
			case ".png", ".jpeg", ".gif":
				b, err := os.ReadFile(name)
				require.NoError(t, err)
				out[filepath.Base(name)] = b
			}
		}
	}
	return out
}

// checkerSamples adds to goImages what they lack: a progressive JPEG with
// end-of-band runs and refinements, a zero-filled interlaced 16-bit PNG, a
// GIF of several frames.
func checkerSamples(t testing.TB) map[string][]byte {
	out := goImageFiles(t)
	out["mediatest progressive"] = mediatest.ProgressiveJPEG(67, 45)
	out["mediatest png"] = mediatest.PNG(67, 45, mediatest.RGBA, 16, true)
	out["mediatest gif"] = mediatest.GIF(67, 45, 3)
	out["media png"] = PNG(67, 45, "x")
	return out
}

func TestCheckersAgreeWithDecoders(t *testing.T) {
	goImages(t) // skips without them
	n := 0
	for name, b := range checkerSamples(t) {
		mt, _ := Detect(b)
		requireSameVerdict(t, mt, b, name)
		n++
		// Cuts, then single-byte corruptions spread over the file.
		step := max(1, len(b)/64)
		for cut := 1; cut < len(b); cut += step {
			requireSameVerdict(t, mt, b[:cut], fmt.Sprintf("%s cut to %d bytes", name, cut))
		}
		for cut := max(1, len(b)-8); cut < len(b); cut++ {
			requireSameVerdict(t, mt, b[:cut], fmt.Sprintf("%s cut to %d bytes", name, cut))
		}
		step = max(1, len(b)/48)
		for pos := 0; pos < len(b); pos += step {
			for _, x := range []byte{0x01, 0x80, 0xff} {
				c := bytes.Clone(b)
				c[pos] ^= x
				requireSameVerdict(t, mt, c, fmt.Sprintf("%s with byte %d xor %#x", name, pos, x))
			}
		}
	}
	t.Logf("%d files", n)
}

func TestCheckersRefuseWhatDecodersRefuse(t *testing.T) {
	for name, b := range goImages(t) {
		mt, _ := Detect(b)
		if err, ok := decoderVerdict(mt, b); ok && err != nil {
			assert.Error(t, checkerVerdict(mt, b), "%s: %v", name, err)
		}
	}
}

func TestCheckJPEGReservesItsCoefficientBits(t *testing.T) {
	b := mediatest.ProgressiveJPEG(640, 480)
	var asked int64
	released := false
	require.NoError(t, checkJPEG(b, func(n int64) (func(), error) {
		asked = n
		return func() { released = true }, nil
	}))
	assert.Equal(t, int64(3*80*60*8), asked, "8 bytes a block of each component")
	assert.True(t, released)

	err := checkJPEG(b, func(int64) (func(), error) { return nil, fmt.Errorf("no room") })
	assert.ErrorContains(t, err, "no room")

	// A sequential JPEG keeps nothing.
	require.NoError(t, checkJPEG(jpegSample(t, 640, 480), func(int64) (func(), error) {
		t.Fatal("a baseline JPEG reserved memory")
		return nil, nil
	}))
}
