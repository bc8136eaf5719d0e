package media

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// wavStream is what one walk of a RIFF/WAVE file's chunks finds.
type wavStream struct {
	format, blockAlign uint16
	rate, byteRate     uint32
	dataSize           uint64 // the data chunk's bytes present
	haveFmt, haveData  bool
	stop               error // the first break in the chunk layout, nil when there is none
}

// readWAV is the one WAVE reader: it walks the chunks, keeping the first
// fmt and data chunks. A data chunk claiming more bytes than present (a
// truncated upload, or a streaming writer's 0xFFFFFFFF) counts the bytes
// present; the probe reads on past such breaks, validation stops at them.
func readWAV(b []byte) (wavStream, error) {
	var w wavStream
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return w, errors.New("not a WAVE file")
	}
	fail := func(err error) {
		if w.stop == nil {
			w.stop = err
		}
	}
	streamed := false                    // a streaming writer's unknown sizes: nothing to check against
	for body := b[12:]; len(body) > 1; { // a lone last byte is padding
		if len(body) < 8 {
			fail(errTruncated)
			break
		}
		id, size := string(body[:4]), uint64(binary.LittleEndian.Uint32(body[4:]))
		if id == "data" && size == 0xffffffff {
			streamed, size = true, uint64(len(body))-8
		}
		chunk := body[8:min(8+size, uint64(len(body)))]
		switch {
		case id == "fmt " && !w.haveFmt:
			if len(chunk) < 16 {
				return w, errors.New("short fmt chunk")
			}
			w.format = binary.LittleEndian.Uint16(chunk)
			w.rate = binary.LittleEndian.Uint32(chunk[4:])
			w.byteRate = binary.LittleEndian.Uint32(chunk[8:])
			w.blockAlign = binary.LittleEndian.Uint16(chunk[12:])
			w.haveFmt = true
		case id == "data" && !w.haveData:
			if !w.haveFmt {
				fail(errors.New("the data chunk comes before the fmt chunk"))
			}
			w.dataSize, w.haveData = uint64(len(chunk)), true
		}
		if 8+size > uint64(len(body)) {
			fail(errTruncated)
			break
		}
		body = body[min(8+size+size%2, uint64(len(body))):] // chunks are padded to even sizes
	}
	if riff := uint64(binary.LittleEndian.Uint32(b[4:])); !streamed && riff != 0xffffffff && 8+riff > uint64(len(b)) {
		fail(errTruncated)
	}
	return w, nil
}

// audio returns the duration and sample rate of the samples present.
func (w wavStream) audio() (AudioInfo, error) {
	switch {
	case !w.haveFmt || !w.haveData:
		return AudioInfo{}, errors.New("no fmt or no data chunk")
	case w.dataSize == 0:
		return AudioInfo{}, errors.New("no samples")
	}
	a := AudioInfo{SampleRate: int(w.rate)}
	var err error
	switch w.format {
	case 1, 3, 6, 7, 0xfffe: // PCM, float, A-law, µ-law, extensible: fixed-size frames
		if w.blockAlign == 0 {
			return AudioInfo{}, errors.New("the block align is zero")
		}
		if w.dataSize < uint64(w.blockAlign) {
			return AudioInfo{}, errors.New("no whole sample")
		}
		a.Duration, err = ticksToDuration(w.dataSize/uint64(w.blockAlign), uint64(w.rate))
	default: // compressed: only the average byte rate is known
		a.Duration, err = ticksToDuration(w.dataSize, uint64(w.byteRate))
	}
	return a, err
}

// wavAudio reads a WAVE file's duration and sample rate from its fmt and
// data chunks.
func wavAudio(b []byte) (AudioInfo, error) {
	w, err := readWAV(b)
	if err == nil {
		var a AudioInfo
		if a, err = w.audio(); err == nil {
			return a, nil
		}
	}
	return AudioInfo{}, fmt.Errorf("media: WAVE: %w", err)
}

// validateWAV checks that every chunk, the data chunk above all, lies
// within the file, and that the duration is known.
func validateWAV(b []byte) error {
	w, err := readWAV(b)
	switch {
	case err != nil:
		return err
	case w.stop != nil:
		return w.stop
	}
	_, err = w.audio()
	return err
}
