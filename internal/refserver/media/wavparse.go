package media

import (
	"encoding/binary"
	"errors"
)

// wavAudio reads a RIFF/WAVE file's duration and sample rate from its fmt
// and data chunks. A data chunk claiming more bytes than present (a
// truncated upload, or a streaming writer's 0xFFFFFFFF) counts only the
// bytes present.
func wavAudio(b []byte) (AudioInfo, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return AudioInfo{}, errors.New("media: not a WAVE file")
	}
	var (
		format, blockAlign uint16
		rate, byteRate     uint32
		dataSize           uint64
		haveFmt, haveData  bool
	)
	for b = b[12:]; len(b) >= 8 && !(haveFmt && haveData); {
		id, size := string(b[:4]), uint64(binary.LittleEndian.Uint32(b[4:]))
		body := b[8:]
		if size < uint64(len(body)) {
			body = body[:size]
		}
		switch id {
		case "fmt ":
			if len(body) < 16 {
				return AudioInfo{}, errors.New("media: short WAVE fmt chunk")
			}
			format = binary.LittleEndian.Uint16(body)
			rate = binary.LittleEndian.Uint32(body[4:])
			byteRate = binary.LittleEndian.Uint32(body[8:])
			blockAlign = binary.LittleEndian.Uint16(body[12:])
			haveFmt = true
		case "data":
			dataSize, haveData = uint64(len(body)), true
		}
		next := 8 + size + size%2 // chunks are padded to even sizes
		if next >= uint64(len(b)) {
			break
		}
		b = b[next:]
	}
	switch {
	case !haveFmt || !haveData:
		return AudioInfo{}, errors.New("media: WAVE file lacks fmt or data chunk")
	case dataSize == 0:
		return AudioInfo{}, errors.New("media: WAVE file has no samples")
	}
	a := AudioInfo{SampleRate: int(rate)}
	var err error
	switch format {
	case 1, 3, 6, 7, 0xfffe: // PCM, float, A-law, µ-law, extensible: fixed-size frames
		if blockAlign == 0 {
			return AudioInfo{}, errors.New("media: WAVE block align is zero")
		}
		if dataSize < uint64(blockAlign) {
			return AudioInfo{}, errors.New("media: WAVE file has no whole sample")
		}
		a.Duration, err = ticksToDuration(dataSize/uint64(blockAlign), uint64(rate))
	default: // compressed: only the average byte rate is known
		a.Duration, err = ticksToDuration(dataSize, uint64(byteRate))
	}
	return a, err
}
