package media

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// mpegFrame is a decoded MPEG audio frame header.
type mpegFrame struct {
	length  int // bytes, header included
	samples int // per channel
	rate    int // Hz
	mpeg1   bool
	mono    bool
}

// Bitrates in kbit/s by table row, indexed by the header's bitrate index
// (0, "free format", and 15, invalid, are refused before lookup).
var mpegBitrates = [5][16]int{
	{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448}, // MPEG-1 layer I
	{0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384},    // MPEG-1 layer II
	{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320},     // MPEG-1 layer III
	{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256},    // MPEG-2/2.5 layer I
	{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},         // MPEG-2/2.5 layers II, III
}

// mpegRates are sample rates by version bits (MPEG-2.5, reserved, 2, 1).
var mpegRates = [4][3]int{{11025, 12000, 8000}, {}, {22050, 24000, 16000}, {44100, 48000, 32000}}

// parseMPEGFrame decodes the 4-byte frame header at the start of b.
func parseMPEGFrame(b []byte) (mpegFrame, bool) {
	if len(b) < 4 {
		return mpegFrame{}, false
	}
	h := binary.BigEndian.Uint32(b)
	version, layer := h>>19&3, h>>17&3
	brIdx, srIdx := h>>12&0xf, h>>10&3
	if h>>21 != 0x7ff || version == 1 || layer == 0 || brIdx == 0 || brIdx == 15 || srIdx == 3 {
		return mpegFrame{}, false
	}
	f := mpegFrame{rate: mpegRates[version][srIdx], mpeg1: version == 3, mono: h>>6&3 == 3}
	pad := int(h >> 9 & 1)
	row := 3 - int(layer) // layer bits: 3 = I, 2 = II, 1 = III
	if !f.mpeg1 {
		row = 4
		if layer == 3 {
			row = 3
		}
	}
	br := mpegBitrates[row][brIdx] * 1000
	switch {
	case layer == 3: // layer I: 384 samples in 4-byte slots
		f.samples = 384
		f.length = (12*br/f.rate + pad) * 4
	case layer == 2 || f.mpeg1:
		f.samples = 1152
		f.length = 144*br/f.rate + pad
	default: // layer III of MPEG-2 and 2.5
		f.samples = 576
		f.length = 72*br/f.rate + pad
	}
	return f, true
}

// skipID3v2 returns b after any leading ID3v2 tags.
func skipID3v2(b []byte) []byte {
	for len(b) >= 10 && string(b[:3]) == "ID3" {
		size := 0
		for _, c := range b[6:10] {
			if c&0x80 != 0 {
				return b // not a synchsafe integer: not a tag
			}
			size = size<<7 | int(c)
		}
		size += 10
		if b[5]&0x10 != 0 { // footer present
			size += 10
		}
		if size > len(b) {
			return nil
		}
		b = b[size:]
	}
	return b
}

// mp3Start finds the first frame that is followed by a frame of the same
// stream (or ends the file), so stray 0xFF bytes are not taken for audio.
func mp3Start(b []byte) (int, mpegFrame, bool) {
	for i := 0; i+4 <= len(b); i++ {
		if b[i] != 0xff {
			continue
		}
		f, ok := parseMPEGFrame(b[i:])
		if !ok || i+f.length > len(b) {
			continue
		}
		if i+f.length == len(b) {
			return i, f, true
		}
		if g, ok := parseMPEGFrame(b[i+f.length:]); ok && g.rate == f.rate {
			return i, f, true
		}
	}
	return 0, mpegFrame{}, false
}

// vbrFrameCount reads the frame count of a Xing/Info or VBRI header held in
// the first frame, which encoders write so players need not walk the file.
// isTag reports that the frame is such a header (and holds no audio) even
// when it carries no count.
func vbrFrameCount(frame []byte, f mpegFrame) (n uint32, hasCount, isTag bool) {
	side := 17 // side information size, after which Xing/Info sits
	switch {
	case f.mpeg1 && !f.mono:
		side = 32
	case !f.mpeg1 && f.mono:
		side = 9
	}
	if x := frame[min(4+side, len(frame)):]; len(x) >= 12 && (bytes.HasPrefix(x, []byte("Xing")) || bytes.HasPrefix(x, []byte("Info"))) {
		if binary.BigEndian.Uint32(x[4:])&1 != 0 {
			return binary.BigEndian.Uint32(x[8:]), true, true
		}
		return 0, false, true
	}
	if x := frame[min(36, len(frame)):]; len(x) >= 18 && bytes.HasPrefix(x, []byte("VBRI")) {
		return binary.BigEndian.Uint32(x[14:]), true, true
	}
	return 0, false, false
}

// mp3Audio sums the frames of an MPEG audio stream, or trusts its
// Xing/Info/VBRI frame count when present, at the first frame's rate.
func mp3Audio(b []byte) (AudioInfo, error) {
	b = skipID3v2(b)
	start, first, ok := mp3Start(b)
	if !ok {
		return AudioInfo{}, errors.New("media: no MPEG audio frames")
	}
	a := AudioInfo{SampleRate: first.rate}
	var err error
	b = b[start:]
	n, hasCount, isTag := vbrFrameCount(b[:first.length], first)
	if hasCount && n > 0 {
		a.Duration, err = ticksToDuration(uint64(n)*uint64(first.samples), uint64(first.rate))
		return a, err
	}
	if isTag {
		b = b[first.length:]
	}
	var samples uint64
	for len(b) > 0 {
		f, ok := parseMPEGFrame(b)
		if !ok || f.rate != first.rate || f.length > len(b) {
			break // trailing tags (ID3v1, APE) or a truncated last frame
		}
		samples += uint64(f.samples)
		b = b[f.length:]
	}
	if samples == 0 {
		return AudioInfo{}, errors.New("media: MPEG audio stream is empty")
	}
	a.Duration, err = ticksToDuration(samples, uint64(first.rate))
	return a, err
}
