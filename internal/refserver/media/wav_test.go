package media

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWAVDurationRoundTrip(t *testing.T) {
	for _, d := range []time.Duration{
		250 * time.Microsecond, // one sample: odd size, padded
		time.Millisecond,
		time.Second,
		2500 * time.Millisecond,
		25 * time.Minute,
	} {
		b := WAV(d, "tone")
		got, err := AudioDuration(b)
		require.NoError(t, err, d)
		assert.Equal(t, d, got)

		mt, kind := Detect(b)
		assert.Equal(t, TypeWAV, mt)
		assert.Equal(t, Audio, kind)
		assert.Zero(t, len(b)%2, "RIFF size is even")
		assert.Equal(t, uint32(len(b)-8), binary.LittleEndian.Uint32(b[4:]), "RIFF size covers the file")
	}
}

func TestWAVSizeIsSmall(t *testing.T) {
	b := WAV(25*time.Minute, "")
	assert.Equal(t, 44+25*60*WAVSampleRate, len(b), "one byte per sample")
}

func TestWAVRoundsToSampleAndClamps(t *testing.T) {
	got, err := AudioDuration(WAV(time.Second+50*time.Microsecond, ""))
	require.NoError(t, err)
	assert.Equal(t, time.Second, got, "rounded to the nearest 125µs sample")

	got, err = AudioDuration(WAV(2*MaxWAVDuration, ""))
	require.NoError(t, err)
	assert.Equal(t, MaxWAVDuration, got)

	_, err = AudioDuration(WAV(-time.Second, ""))
	assert.Error(t, err, "a negative duration makes an empty clip, which is not audio")
}

func TestWAVDeterministicAudibleSpeech(t *testing.T) {
	a := WAV(3*time.Second, "a")
	assert.Equal(t, a, WAV(3*time.Second, "a"))
	assert.NotEqual(t, a, WAV(3*time.Second, "b"), "seed changes the voice")
	assert.NotEqual(t, SpeechWAV(3*time.Second, "v", "one script"), SpeechWAV(3*time.Second, "v", "another script"), "text changes the rhythm")
	assert.Greater(t, rms8(a[44:]), 0.1, "audible: RMS above -20 dBFS")
	for _, s := range a[44:] {
		require.InDelta(t, 128, int(s), 100, "no clipping")
	}
	// Speech has pauses: some tenths of a second are much quieter than
	// the clip as a whole, and most are not.
	quiet := 0
	for i := 44; i+WAVSampleRate/10 <= len(a); i += WAVSampleRate / 10 {
		if rms8(a[i:i+WAVSampleRate/10]) < 0.02 {
			quiet++
		}
	}
	assert.Positive(t, quiet)
	assert.Less(t, quiet, 10)
}

// rms8 is the RMS of unsigned 8-bit samples, full scale 1.
func rms8(b []byte) float64 {
	var sum float64
	for _, s := range b {
		v := (float64(s) - 128) / 128
		sum += v * v
	}
	return math.Sqrt(sum / float64(len(b)))
}
