package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
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

// mp3Stream is what one walk of an MPEG audio stream finds.
type mp3Stream struct {
	first    mpegFrame
	count    uint32 // the Xing/Info/VBRI frame count, 0 when there is none
	hasCount bool
	frames   int    // audio frames, a Xing/Info/VBRI frame not counted
	samples  uint64 // their samples per channel
	stop     error  // why the walk ended before the end of the stream, nil when it reached it
}

// readMP3 is the one MP3 reader: it skips ID3v2 tags at the start and the
// tags players accept at the end, finds the first frame and walks the
// frames from there, up to the end or the first bytes that are not a frame
// of the stream. github.com/hajimehoshi/go-mp3 was weighed and not taken:
// it decodes layer III only (the service accepts layers I and II as
// audio/mpeg), ignores Xing/Info/VBRI frame counts, and stops silently at
// junk, where validation must say where it is.
func readMP3(b []byte) (mp3Stream, error) {
	if b = skipID3v2(b); b == nil {
		return mp3Stream{}, errTruncated // the ID3v2 tag runs past the end
	}
	b = trimMP3Tags(b)
	start, first, ok := mp3Start(b)
	if !ok {
		return mp3Stream{}, errors.New("no MPEG audio frames")
	}
	b = b[start:]
	s := mp3Stream{first: first}
	var isTag bool
	s.count, s.hasCount, isTag = vbrFrameCount(b[:first.length], first)
	for pos := 0; pos < len(b); {
		f, ok := parseMPEGFrame(b[pos:])
		switch {
		case !ok && pos+4 > len(b):
			s.stop = errTruncated
		case !ok || f.rate != first.rate:
			s.stop = fmt.Errorf("not an MPEG audio frame at byte %d", pos+start)
		case pos+f.length > len(b):
			s.stop = errTruncated
		}
		if s.stop != nil {
			break
		}
		s.frames++
		s.samples += uint64(f.samples)
		pos += f.length
	}
	if isTag {
		s.frames--
		s.samples -= uint64(first.samples)
	}
	return s, nil
}

// mp3Audio trusts the stream's Xing/Info/VBRI frame count when present,
// else sums the frames up to the first that is cut short or foreign, at the
// first frame's rate.
func mp3Audio(b []byte) (AudioInfo, error) {
	s, err := readMP3(b)
	if err != nil {
		return AudioInfo{}, fmt.Errorf("media: MP3: %w", err)
	}
	n := s.samples
	if s.hasCount && s.count > 0 {
		n = uint64(s.count) * uint64(s.first.samples)
	}
	if n == 0 {
		return AudioInfo{}, errors.New("media: MPEG audio stream is empty")
	}
	d, err := ticksToDuration(n, uint64(s.first.rate))
	return AudioInfo{Duration: d, SampleRate: s.first.rate}, err
}

// validateMP3 requires the frames to run from the first to the end of the
// file, between the tags, and as many as a Xing/Info/VBRI count announces.
func validateMP3(b []byte) error {
	s, err := readMP3(b)
	switch {
	case err != nil:
		return err
	case s.stop != nil:
		return s.stop
	case s.hasCount && uint64(s.frames)+1 < uint64(s.count):
		// Encoders count the frames after the tag frame; some count it too.
		return fmt.Errorf("%d of the %d frames the header announces: %w", s.frames, s.count, errTruncated)
	case s.frames <= 0:
		return errors.New("no audio frames")
	}
	return nil
}

// trimMP3Tags removes the tags players accept after the audio: an APEv2
// tag, then an ID3v1 tag.
func trimMP3Tags(b []byte) []byte {
	if n := len(b); n >= 128 && string(b[n-128:n-125]) == "TAG" {
		b = b[:n-128]
	}
	if n := len(b); n >= 32 && string(b[n-32:n-24]) == "APETAGEX" {
		size := uint64(binary.LittleEndian.Uint32(b[n-20:]))   // items and footer
		if binary.LittleEndian.Uint32(b[n-12:])&(1<<31) != 0 { // a header precedes the items
			size += 32
		}
		if size <= uint64(n) {
			b = b[:uint64(n)-size]
		}
	}
	return b
}
