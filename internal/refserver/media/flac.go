package media

import (
	"encoding/binary"
	"errors"
	"time"
)

// flacStreamInfo reads sample rate and total samples from a STREAMINFO
// block body (34 bytes: they sit in the 64 bits at offset 10).
func flacStreamInfo(si []byte) (rate, total uint64, err error) {
	if len(si) < 18 {
		return 0, 0, errors.New("media: short FLAC STREAMINFO")
	}
	v := binary.BigEndian.Uint64(si[10:])
	return v >> 44, v & (1<<36 - 1), nil
}

// flacDuration reads a native FLAC file's duration from STREAMINFO.
func flacDuration(b []byte) (time.Duration, error) {
	a, err := flacAudio(b)
	return a.Duration, err
}

// flacAudio reads a native FLAC file's duration and sample rate from
// STREAMINFO, which the format requires to be the first metadata block.
func flacAudio(b []byte) (AudioInfo, error) {
	if len(b) < 8 || string(b[:4]) != "fLaC" {
		return AudioInfo{}, errors.New("media: not a FLAC file")
	}
	if b[4]&0x7f != 0 {
		return AudioInfo{}, errors.New("media: FLAC does not start with STREAMINFO")
	}
	n := int(b[5])<<16 | int(b[6])<<8 | int(b[7])
	if n > len(b)-8 {
		return AudioInfo{}, errors.New("media: truncated FLAC STREAMINFO")
	}
	rate, total, err := flacStreamInfo(b[8 : 8+n])
	if err != nil {
		return AudioInfo{}, err
	}
	if total == 0 {
		return AudioInfo{}, errors.New("media: FLAC total sample count unknown or zero")
	}
	d, err := ticksToDuration(total, rate)
	return AudioInfo{Duration: d, SampleRate: int(rate)}, err
}
