package media

import "math"

// Sound names the audio a generated clip carries.
type Sound int

// The sounds a Clip can carry.
const (
	// NoSound makes a video without an audio track.
	NoSound Sound = iota
	// Chime is a run of decaying notes on a pentatonic scale, for reveals.
	Chime
	// Speech is a voiced babble of syllables and word gaps at about the
	// pace of speech, for voiceovers and avatars.
	Speech
)

// sineTable holds one period of a sine; lookups keep long clips cheap
// and the output the same on every platform.
var sineTable = func() (t [4096]float64) {
	for i := range t {
		t[i] = math.Sin(2 * math.Pi * float64(i) / float64(len(t)))
	}
	return t
}()

// sine returns sin(2π·phase), phase in turns.
func sine(phase float64) float64 {
	return sineTable[int(phase*float64(len(sineTable)))&(len(sineTable)-1)]
}

// pentatonic is a major pentatonic scale over two octaves, as frequency
// ratios, so any run of notes sounds agreeable.
var pentatonic = [...]float64{1, 9.0 / 8, 5.0 / 4, 3.0 / 2, 5.0 / 3, 2, 9.0 / 4, 5.0 / 2}

// synth makes a deterministic tone sequence sample by sample: notes (or
// syllables) with their own pitch, timbre and envelope, and gaps.
type synth struct {
	rate  float64
	style Sound
	base  float64 // Hz: the voice's pitch or the chime's key
	rng   uint64  // splitmix64 state, from the text seed

	n, pos int // length of the current note and where in it we are
	silent bool
	step   float64    // phase increment per sample, in turns
	phase  float64    // of the fundamental
	harm   [4]float64 // weights of harmonics 1..4
}

// newSynth seeds the pitch and timbre from voice and the rhythm and
// melody from text, so one voice sounds alike across scripts.
func newSynth(rate int, style Sound, voice, text string) *synth {
	v, t := seedBytes(voice), seedBytes(text)
	s := &synth{rate: float64(rate), style: style, rng: uint64(seedUint(t, 0))<<32 | uint64(seedUint(t, 1))}
	if style == Speech {
		s.base = 95 + float64(seedUint(v, 0)%160) // a low to high speaking voice
	} else {
		s.base = 330 + float64(seedUint(v, 0)%330)
	}
	return s
}

// rand returns a uniform number in [0, 1).
func (s *synth) rand() float64 {
	s.rng += 0x9e3779b97f4a7c15
	z := s.rng
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return float64((z^z>>31)>>11) / (1 << 53)
}

// nextNote starts the next syllable, note or gap.
func (s *synth) nextNote() {
	s.pos = 0
	if s.style == Speech {
		// A word gap after about one syllable in three.
		if !s.silent && s.rand() < 0.35 {
			s.silent = true
			s.n = int(s.rate * (0.06 + 0.12*s.rand()))
			return
		}
		s.silent = false
		s.n = int(s.rate * (0.11 + 0.16*s.rand()))
		s.step = s.base * (0.85 + 0.4*s.rand()) / s.rate
		// The vowel: a random spectrum over a falling slope.
		for k := range s.harm {
			s.harm[k] = (0.3 + 0.7*s.rand()) / float64(k+1)
		}
		return
	}
	s.silent = false
	s.n = int(s.rate * (0.2 + 0.3*s.rand()))
	s.step = s.base * pentatonic[int(s.rand()*float64(len(pentatonic)))] / s.rate
	s.harm = [4]float64{1, 0.35, 0.12, 0.05}
}

// next returns the next sample, within ±0.7.
func (s *synth) next() float64 {
	if s.pos >= s.n {
		s.nextNote()
	}
	x := float64(s.pos) / float64(s.n)
	s.pos++
	if s.silent {
		return 0
	}
	s.phase += s.step
	if s.phase >= 1 {
		s.phase--
	}
	var v, sum float64
	for k, w := range s.harm {
		v += w * sine(s.phase*float64(k+1))
		sum += w
	}
	var env float64
	if s.style == Speech {
		env = sine(x / 2) // a smooth rise and fall over the syllable
	} else {
		env = min(1, 50*x) * (1 - x) * (1 - x) // a strike, then a decay
	}
	return 0.7 * env * v / sum
}
