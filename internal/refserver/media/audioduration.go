package media

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// AudioInfo is what ProbeAudio reads of an audio stream.
type AudioInfo struct {
	// Duration is the length of the stream.
	Duration time.Duration
	// SampleRate is the samples a second of each channel the stream
	// decodes to, as its header states it; 0 when it states none.
	SampleRate int
}

// AudioDuration returns the length of the audio stream in b, as
// [ProbeAudio] reads it.
func AudioDuration(b []byte) (time.Duration, error) {
	a, err := ProbeAudio(b)
	return a.Duration, err
}

// ProbeAudio returns the length and sample rate of the audio stream in b,
// identified by Detect. The length is read:
//
//   - WAV: exactly, from the fmt and data chunks (bytes actually present);
//   - FLAC: STREAMINFO total samples over sample rate;
//   - Ogg (Vorbis, Opus, FLAC, Speex): last granule position of the first
//     stream over its rate, less the Opus pre-skip (Opus counts 48 kHz);
//   - MP3: Xing/Info/VBRI frame count when present, else the sum of the
//     MPEG frames after any ID3v2 tag;
//   - M4A/MP4/MOV: the first sound track's mdhd duration over its timescale;
//   - WebM: Segment Info Duration times TimecodeScale, or the last block's
//     timecode when Duration is absent (live recordings), which omits the
//     last block's own length.
//
// The sample rate is the fmt chunk's (WAV), STREAMINFO's (FLAC, Ogg FLAC),
// the identification header's (Vorbis, Speex; Opus always decodes at
// 48 kHz), the first frame's (MP3), the sound track's sample entry's, or
// its media clock's when the entry has none (M4A), the first SamplingFrequency
// or Matroska's default of 8 kHz (WebM).
//
// It fails on bytes that are not one of these, or that hold no real audio
// stream: no sound track, zero samples, an unknown length. It reads only
// what is present, allocates nothing in proportion to header fields, and
// does not check codec payloads or checksums.
func ProbeAudio(b []byte) (AudioInfo, error) {
	mt, _ := Detect(b)
	var (
		a   AudioInfo
		err error
	)
	switch mt {
	case TypeWAV:
		a, err = wavAudio(b)
	case TypeFLAC:
		a, err = flacAudio(b)
	case TypeOGG:
		a, err = oggAudio(b)
	case TypeMP3:
		a, err = mp3Audio(b)
	case TypeM4A, TypeMP4, TypeQuickTime:
		a, err = mp4Audio(b)
	case TypeWebM, TypeWebMAudio:
		a, err = webmAudio(b)
	default:
		return AudioInfo{}, fmt.Errorf("media: not audio (detected %s)", mt)
	}
	if err != nil {
		return AudioInfo{}, err
	}
	if a.Duration <= 0 {
		return AudioInfo{}, errors.New("media: audio stream is empty")
	}
	return a, nil
}

// mp4Audio reads the first sound track's media duration and sample rate.
func mp4Audio(b []byte) (AudioInfo, error) {
	m, err := parseMovie(b)
	if err != nil {
		return AudioInfo{}, err
	}
	for _, t := range m.tracks {
		if t.handler == "soun" && t.hasMediaHeader {
			d, err := ticksToDuration(t.ticks, t.scale)
			rate := t.sampleRate
			if rate == 0 {
				rate = int(min(t.scale, math.MaxInt32))
			}
			return AudioInfo{Duration: d, SampleRate: rate}, err
		}
	}
	return AudioInfo{}, errors.New("media: no sound track")
}

// webmAudio reads a WebM/Matroska file's duration and sample rate if it
// has an audio track.
func webmAudio(b []byte) (AudioInfo, error) {
	w, err := parseWebM(b)
	if err != nil {
		return AudioInfo{}, err
	}
	if !w.audio {
		return AudioInfo{}, errors.New("media: no audio track")
	}
	d, err := w.length()
	rate := 8000 // Matroska's default SamplingFrequency
	if w.sampleRate > 0 {
		rate = int(min(w.sampleRate, math.MaxInt32))
	}
	return AudioInfo{Duration: d, SampleRate: rate}, err
}
