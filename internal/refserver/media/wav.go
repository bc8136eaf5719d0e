package media

import (
	"encoding/binary"
	"math"
	"time"
)

// WAV output format: 8-bit unsigned PCM, mono, 4000 Hz. At 4000 bytes per
// second a 25-minute clip is 6 MB, which the reference server can hold many
// of; any whole number of milliseconds is a whole number of samples, so the
// duration in the header is exact.
const (
	WAVSampleRate = 4000
	// MaxWAVDuration bounds WAV output (14.4 MB); longer requests are clamped.
	MaxWAVDuration = time.Hour
)

// WAV returns a RIFF/WAVE file holding a quiet sine tone of duration d, 8-bit
// PCM mono at WAVSampleRate. The tone's pitch (220..659 Hz) comes from seed.
// The sample count is d*WAVSampleRate rounded to the nearest sample, so d is
// exact when it is a multiple of 250µs. d is clamped to 0..MaxWAVDuration.
func WAV(d time.Duration, seed string) []byte {
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

	// A whole-hertz tone repeats exactly every second, so one second of
	// samples is computed and then copied, keeping long clips cheap.
	s := seedBytes(seed)
	freq := 220 + float64(seedUint(s, 0)%440)
	var second [WAVSampleRate]byte
	for i := range second {
		v := 20 * math.Sin(2*math.Pi*freq*float64(i)/WAVSampleRate)
		second[i] = byte(128 + int(math.Round(v)))
	}
	data := out[header : header+n]
	for off := 0; off < n; off += WAVSampleRate {
		copy(data[off:], second[:])
	}
	return out
}
