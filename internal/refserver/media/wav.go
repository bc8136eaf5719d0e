package media

import (
	"encoding/binary"
	"math"
	"time"
)

// WAV output format: 8-bit unsigned PCM, mono, 8000 Hz: telephone speech,
// the lowest rate the reference server takes as a voice sample, so that
// its own audio can be uploaded to clone a voice. At 8000 bytes per second
// a 25-minute clip is 12 MB; any whole number of milliseconds is a whole
// number of samples, so the duration in the header is exact.
const (
	WAVSampleRate = 8000
	// MaxWAVDuration bounds WAV output (28.8 MB, under the 30 MB upload
	// limit); longer requests are clamped.
	MaxWAVDuration = time.Hour
)

// WAV returns a RIFF/WAVE file holding speech-like babble of duration d
// (see SpeechWAV), its voice and rhythm both seeded by seed.
func WAV(d time.Duration, seed string) []byte {
	return SpeechWAV(d, seed, seed)
}

// SpeechWAV returns a RIFF/WAVE file, 8-bit PCM mono at WAVSampleRate,
// holding an audible babble of syllables and word gaps of duration d: its
// pitch and timbre come from voice, its rhythm from text. The sample count
// is d*WAVSampleRate rounded to the nearest sample, so d is exact when it is
// a multiple of 125µs. d is clamped to 0..MaxWAVDuration. The output is the
// same for the same arguments.
func SpeechWAV(d time.Duration, voice, text string) []byte {
	d = min(max(d, 0), MaxWAVDuration)
	n := int((d*WAVSampleRate + time.Second/2) / time.Second)

	const header = 44
	pad := n % 2 // RIFF chunks are padded to an even size
	out := make([]byte, header+n+pad)
	copy(out[0:], "RIFF")
	binary.LittleEndian.PutUint32(out[4:], uint32(header-8+n+pad))
	copy(out[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(out[16:], 16)            // fmt chunk size
	binary.LittleEndian.PutUint16(out[20:], 1)             // PCM
	binary.LittleEndian.PutUint16(out[22:], 1)             // mono
	binary.LittleEndian.PutUint32(out[24:], WAVSampleRate) // sample rate
	binary.LittleEndian.PutUint32(out[28:], WAVSampleRate) // byte rate
	binary.LittleEndian.PutUint16(out[32:], 1)             // block align
	binary.LittleEndian.PutUint16(out[34:], 8)             // bits per sample
	copy(out[36:], "data")
	binary.LittleEndian.PutUint32(out[40:], uint32(n))

	s := newSynth(WAVSampleRate, Speech, voice, text)
	for i := range n {
		out[header+i] = byte(128 + int(math.Round(127*s.next())))
	}
	return out
}
