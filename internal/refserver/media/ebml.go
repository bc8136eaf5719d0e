package media

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"time"
)

// EBML element IDs (with their length markers) that the WebM probes use.
const (
	ebmlHeaderID   = 0x1A45DFA3
	ebmlDocTypeID  = 0x4282
	mkvSegmentID   = 0x18538067
	mkvInfoID      = 0x1549A966
	mkvScaleID     = 0x2AD7B1
	mkvDurationID  = 0x4489
	mkvTracksID    = 0x1654AE6B
	mkvTrackID     = 0xAE
	mkvTrackTypeID = 0x83
	mkvAudioID     = 0xE1
	mkvRateID      = 0xB5 // SamplingFrequency, in Audio
	mkvClusterID   = 0x1F43B675
	mkvTimecodeID  = 0xE7
	mkvGroupID     = 0xA0
	mkvBlockID     = 0xA1
	mkvSimpleID    = 0xA3
)

// ebmlMasters are the container elements the walker descends into. Their
// children are read in line, so an unknown size (as written by live
// recorders such as browsers' MediaRecorder) needs no special handling.
var ebmlMasters = map[uint32]bool{
	ebmlHeaderID: true, mkvSegmentID: true, mkvInfoID: true, mkvTracksID: true,
	mkvTrackID: true, mkvClusterID: true, mkvGroupID: true, mkvAudioID: true,
}

// webmInfo is what Detect and AudioDuration need from a WebM/Matroska file.
type webmInfo struct {
	docType      string
	scale        uint64  // nanoseconds per timecode unit
	duration     float64 // Segment Info Duration, in timecode units
	hasDuration  bool
	tracksSeen   bool
	video, audio bool
	clusterTime  uint64
	lastBlock    uint64 // latest block timecode seen, in timecode units
	hasBlocks    bool
	sampleRate   float64 // the first SamplingFrequency, 0 when none
}

// parseWebM walks b as EBML and collects webmInfo. It fails only when b
// does not start with an EBML header; a truncated or corrupt tail ends the
// walk with what was read so far.
func parseWebM(b []byte) (webmInfo, error) {
	info := webmInfo{scale: 1_000_000} // Matroska's default TimecodeScale
	id, _, _, ok := ebmlElement(b)
	if !ok || id != ebmlHeaderID {
		return info, errors.New("media: not EBML")
	}
	for pos := 0; pos < len(b); {
		id, size, hdr, ok := ebmlElement(b[pos:])
		if !ok {
			break
		}
		start := pos + hdr
		if ebmlMasters[id] {
			if id == mkvTracksID {
				info.tracksSeen = true
			}
			pos = start
			continue
		}
		if size < 0 || size > int64(len(b)-start) {
			break // unknown or overlong size on a leaf: nothing more to trust
		}
		info.leaf(id, b[start:start+int(size)])
		pos = start + int(size)
	}
	return info, nil
}

// leaf records one leaf element's value.
func (w *webmInfo) leaf(id uint32, data []byte) {
	switch id {
	case ebmlDocTypeID:
		w.docType = strings.TrimRight(string(data), "\x00")
	case mkvScaleID:
		if v, ok := ebmlUint(data); ok && v > 0 {
			w.scale = v
		}
	case mkvDurationID:
		if len(data) == 4 || len(data) == 8 {
			w.duration, w.hasDuration = ebmlFloat(data), true
		}
	case mkvRateID:
		if w.sampleRate == 0 {
			w.sampleRate = ebmlFloat(data)
		}
	case mkvTrackTypeID:
		if v, ok := ebmlUint(data); ok {
			w.video = w.video || v == 1
			w.audio = w.audio || v == 2
		}
	case mkvTimecodeID:
		if v, ok := ebmlUint(data); ok {
			w.clusterTime = v
		}
	case mkvSimpleID, mkvBlockID:
		// Block header: track number (vint), then a signed 16-bit timecode
		// relative to the cluster.
		_, n, ok := ebmlVint(data, true)
		if !ok || len(data) < n+2 {
			return
		}
		rel := int64(int16(binary.BigEndian.Uint16(data[n:])))
		t := int64(w.clusterTime) + rel
		if t >= 0 && w.clusterTime <= math.MaxInt64 && (!w.hasBlocks || uint64(t) > w.lastBlock) {
			w.lastBlock = uint64(t)
		}
		w.hasBlocks = true
	}
}

// length returns the stream's duration: Segment Info Duration when present,
// else the timecode of the last block (which misses that block's own length).
func (w *webmInfo) length() (time.Duration, error) {
	units := float64(w.lastBlock)
	if w.hasDuration && w.duration > 0 && !math.IsInf(w.duration, 0) {
		units = w.duration
	}
	ns := units * float64(w.scale)
	if math.IsNaN(ns) || ns <= 0 {
		return 0, errors.New("media: webm has no duration")
	}
	if ns >= math.MaxInt64 {
		return 0, errDurationRange
	}
	return time.Duration(math.Round(ns)), nil
}

// ebmlElement reads an element header: its ID (with marker bits), its data
// size (-1 when unknown) and the header length.
func ebmlElement(b []byte) (id uint32, size int64, hdr int, ok bool) {
	rawID, n, ok := ebmlVint(b, false)
	if !ok || n > 4 {
		return 0, 0, 0, false
	}
	sz, m, ok := ebmlVint(b[n:], true)
	if !ok {
		return 0, 0, 0, false
	}
	size = int64(sz)
	if sz == 1<<(7*m)-1 { // all data bits set: unknown size
		size = -1
	}
	return uint32(rawID), size, n + m, true
}

// ebmlVint reads a variable-length integer, keeping the length marker bit
// when strip is false (element IDs are compared with the marker).
func ebmlVint(b []byte, strip bool) (v uint64, n int, ok bool) {
	if len(b) == 0 || b[0] == 0 {
		return 0, 0, false
	}
	n = 1
	for mask := byte(0x80); b[0]&mask == 0; mask >>= 1 {
		n++
	}
	if len(b) < n {
		return 0, 0, false
	}
	v = uint64(b[0])
	if strip {
		v &= uint64(0xff >> n)
	}
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n, true
}

// ebmlFloat reads a float element of 4 or 8 bytes; other sizes read as 0.
func ebmlFloat(data []byte) float64 {
	switch len(data) {
	case 4:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(data)))
	case 8:
		return math.Float64frombits(binary.BigEndian.Uint64(data))
	}
	return 0
}

// ebmlUint reads an unsigned integer element of 0 to 8 bytes.
func ebmlUint(data []byte) (uint64, bool) {
	if len(data) > 8 {
		return 0, false
	}
	var v uint64
	for _, c := range data {
		v = v<<8 | uint64(c)
	}
	return v, true
}
