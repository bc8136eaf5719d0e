package media

import (
	"encoding/binary"
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
	got, err := AudioDuration(WAV(time.Second+100*time.Microsecond, ""))
	require.NoError(t, err)
	assert.Equal(t, time.Second, got, "rounded to the nearest 250µs sample")

	got, err = AudioDuration(WAV(2*MaxWAVDuration, ""))
	require.NoError(t, err)
	assert.Equal(t, MaxWAVDuration, got)

	_, err = AudioDuration(WAV(-time.Second, ""))
	assert.Error(t, err, "a negative duration makes an empty clip, which is not audio")
}

func TestWAVDeterministicQuietTone(t *testing.T) {
	a := WAV(time.Second, "a")
	assert.Equal(t, a, WAV(time.Second, "a"))
	assert.NotEqual(t, a, WAV(time.Second, "b"), "seed changes the pitch")
	for _, s := range a[44:] {
		assert.InDelta(t, 128, int(s), 20, "quiet: within ±20 of silence")
	}
}
