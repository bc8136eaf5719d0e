package media

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The seed corpora live in testdata/fuzz/<FuzzName>/: one small real sample
// per format, so mutations start from inputs that reach deep into parsers.

func FuzzDetect(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		mt, kind := Detect(b)
		if kind == Unknown {
			require.Equal(t, TypeOctetStream, mt)
		} else {
			k, ok := Accepted(mt)
			require.True(t, ok, mt)
			require.Equal(t, k, kind, mt)
			require.True(t, Compatible(mt, mt), mt)
		}
		if w, h, err := ImageConfig(b); err == nil {
			assert.Equal(t, Image, kind)
			assert.Positive(t, w)
			assert.Positive(t, h)
		}
	})
}

func FuzzAudioDuration(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := AudioDuration(b)
		if err == nil {
			require.Positive(t, d)
		}
		a, perr := ProbeAudio(b)
		require.Equal(t, err, perr)
		require.Equal(t, d, a.Duration)
		require.GreaterOrEqual(t, a.SampleRate, 0)
	})
}

func FuzzProbeMP4(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		d, w, h, err := ProbeMP4(b)
		if err == nil {
			require.GreaterOrEqual(t, d, 0*d)
			require.GreaterOrEqual(t, w, 0)
			require.GreaterOrEqual(t, h, 0)
		}
	})
}

func FuzzValidate(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		err := Validate(b)
		require.Equal(t, err, Validate(b), "the verdict is the same every time")
		if err != nil {
			return
		}
		mt, kind := Detect(b)
		require.NotEqual(t, Unknown, kind)
		switch kind {
		case Image:
			w, h, err := ImageConfig(b)
			require.NoError(t, err, mt)
			require.LessOrEqual(t, uint64(w)*uint64(h), uint64(MaxImagePixels))
		case Audio:
			d, err := AudioDuration(b)
			require.NoError(t, err, "a whole audio file has a duration: %s", mt)
			require.Positive(t, d)
		}
	})
}

// FuzzCheckImage holds the PNG, JPEG and GIF checkers to the standard
// library's decoders: the seeds are Go's own test images when installed,
// and the small files of testdata/fuzz/FuzzCheckImage.
func FuzzCheckImage(f *testing.F) {
	for _, b := range checkerSamples(f) {
		if len(b) <= 8<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		mt, _ := Detect(b)
		switch mt {
		case TypePNG, TypeJPEG, TypeGIF:
			requireSameVerdict(t, mt, b, mt)
		}
	})
}
