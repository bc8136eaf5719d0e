package media

import (
	"errors"
	"fmt"
	"time"
)

// AudioDuration returns the length of the audio stream in b, identified by
// Detect:
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
// It fails on bytes that are not one of these, or that hold no real audio
// stream: no sound track, zero samples, an unknown length. It reads only
// what is present, allocates nothing in proportion to header fields, and
// does not check codec payloads or checksums.
func AudioDuration(b []byte) (time.Duration, error) {
	mt, _ := Detect(b)
	var (
		d   time.Duration
		err error
	)
	switch mt {
	case TypeWAV:
		d, err = wavDuration(b)
	case TypeFLAC:
		d, err = flacDuration(b)
	case TypeOGG:
		d, err = oggDuration(b)
	case TypeMP3:
		d, err = mp3Duration(b)
	case TypeM4A, TypeMP4, TypeQuickTime:
		d, err = mp4AudioDuration(b)
	case TypeWebM, TypeWebMAudio:
		d, err = webmAudioDuration(b)
	default:
		return 0, fmt.Errorf("media: not audio (detected %s)", mt)
	}
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, errors.New("media: audio stream is empty")
	}
	return d, nil
}

// mp4AudioDuration returns the first sound track's media duration.
func mp4AudioDuration(b []byte) (time.Duration, error) {
	m, err := parseMovie(b)
	if err != nil {
		return 0, err
	}
	for _, t := range m.tracks {
		if t.handler == "soun" && t.hasMediaHeader {
			return ticksToDuration(t.ticks, t.scale)
		}
	}
	return 0, errors.New("media: no sound track")
}

// webmAudioDuration returns a WebM/Matroska file's duration if it has an
// audio track.
func webmAudioDuration(b []byte) (time.Duration, error) {
	w, err := parseWebM(b)
	if err != nil {
		return 0, err
	}
	if !w.audio {
		return 0, errors.New("media: no audio track")
	}
	return w.length()
}
