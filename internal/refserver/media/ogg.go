package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
)

// oggPage is one page's header fields that the probe needs.
type oggPage struct {
	granule uint64
	serial  uint32
	body    []byte
	size    int // header plus body
}

// parseOggPage reads the page at the start of b.
func parseOggPage(b []byte) (oggPage, bool) {
	if len(b) < 27 || string(b[:4]) != "OggS" || b[4] != 0 {
		return oggPage{}, false
	}
	nseg := int(b[26])
	if len(b) < 27+nseg {
		return oggPage{}, false
	}
	n := 0
	for _, s := range b[27 : 27+nseg] {
		n += int(s)
	}
	end := 27 + nseg + n
	if end > len(b) {
		return oggPage{}, false
	}
	return oggPage{
		granule: binary.LittleEndian.Uint64(b[6:]),
		serial:  binary.LittleEndian.Uint32(b[14:]),
		body:    b[27+nseg : end],
		size:    end,
	}, true
}

// oggCodec reads the granule rate and the samples to skip at the start
// from a stream's identification packet (Vorbis, Opus, FLAC or Speex).
func oggCodec(p []byte) (rate, preSkip uint64, err error) {
	switch {
	case bytes.HasPrefix(p, []byte("\x01vorbis")) && len(p) >= 16:
		rate = uint64(binary.LittleEndian.Uint32(p[12:]))
	case bytes.HasPrefix(p, []byte("OpusHead")) && len(p) >= 12:
		// Opus granules always count 48 kHz samples, whatever the input rate.
		rate, preSkip = 48000, uint64(binary.LittleEndian.Uint16(p[10:]))
	case bytes.HasPrefix(p, []byte("\x7fFLAC")) && len(p) >= 17:
		// Ogg FLAC mapping: 9-byte header, "fLaC", block header, STREAMINFO.
		rate, _, err = flacStreamInfo(p[17:])
	case bytes.HasPrefix(p, []byte("Speex   ")) && len(p) >= 40:
		rate = uint64(binary.LittleEndian.Uint32(p[36:]))
	default:
		return 0, 0, errors.New("media: unsupported Ogg codec")
	}
	if err == nil && rate == 0 {
		err = errors.New("media: Ogg stream sample rate is zero")
	}
	return rate, preSkip, err
}

// oggAudio reads an Ogg stream's duration, the last granule position of
// the first logical stream less the codec's pre-skip over its rate, and
// that rate.
func oggAudio(b []byte) (AudioInfo, error) {
	first, ok := parseOggPage(b)
	if !ok {
		return AudioInfo{}, errors.New("media: not an Ogg stream")
	}
	rate, preSkip, err := oggCodec(first.body)
	if err != nil {
		return AudioInfo{}, err
	}
	var last uint64
	for page, ok := first, true; ok; page, ok = parseOggPage(b) {
		// -1 marks a page on which no packet ends.
		if page.serial == first.serial && page.granule != ^uint64(0) {
			last = page.granule
		}
		b = b[page.size:]
	}
	if last <= preSkip {
		return AudioInfo{}, errors.New("media: Ogg stream has no audio samples")
	}
	d, err := ticksToDuration(last-preSkip, rate)
	return AudioInfo{Duration: d, SampleRate: int(min(rate, math.MaxInt32))}, err
}
