package media

import (
	"encoding/binary"
	"time"
)

// MP4 returns a silent video of duration d at width x height with the
// default look: Clip{Width: width, Height: height, Duration: d}.MP4().
func MP4(d time.Duration, width, height int) []byte {
	return Clip{Width: width, Height: height, Duration: d}.MP4()
}

// MP4 renders the clip as an MP4 file (brand isom): an H.264 Constrained
// Baseline track at VideoFPS with a key frame every two seconds and, when the
// clip has a Sound, a FLAC track exactly as long, interleaved a second at
// a time. The output is the same for the same clip.
func (c Clip) MP4() []byte {
	c = c.normalized()
	s := newScene(c)
	enc := newH264Encoder(c.Width, c.Height, VideoFPS)
	video := muxTrack{
		handler: "vide", timescale: mp4VideoTimescale,
		width: c.Width, height: c.Height,
		entry: avc1Entry(c.Width, c.Height, enc.sps(), enc.pps()),
	}
	pic := make([]ycc, s.mbW*s.mbH)
	for i := range s.frames {
		s.render(i, pic, nil)
		key := i%mp4KeyInterval == 0
		if key {
			video.sync = append(video.sync, uint32(i+1))
		}
		start := len(video.data)
		video.data = enc.picture(video.data, pic, key)
		video.addSample(len(video.data)-start, mp4VideoTimescale/VideoFPS)
	}
	tracks := []*muxTrack{&video}
	if c.Sound != NoSound {
		tracks = append(tracks, flacTrack(c, s.frames))
	}
	return muxMP4(tracks)
}

const (
	// mp4VideoTimescale ticks 512 times per frame, as ffmpeg's muxer would.
	mp4VideoTimescale = 512 * VideoFPS
	// mp4KeyInterval is the frames from one IDR picture to the next: where
	// players can seek to, and most of the size of a clip.
	mp4KeyInterval = 2 * VideoFPS
)

// flacTrack renders the clip's sound for as long as its frames last.
func flacTrack(c Clip, frames int) *muxTrack {
	syn := newSynth(flacRate, c.Sound, c.Voice, c.Text)
	samples := make([]int16, frames*flacRate/VideoFPS)
	for i := range samples {
		samples[i] = int16(32767 * syn.next())
	}
	data, sizes := encodeFLACFrames(samples)
	t := &muxTrack{handler: "soun", timescale: flacRate, data: data, entry: flacEntry(len(samples))}
	for i, n := range sizes {
		t.addSample(n, uint32(min(flacBlock, len(samples)-i*flacBlock)))
	}
	return t
}

// box assembles a plain box from its payload parts.
func box(typ string, parts ...[]byte) []byte {
	n := 8
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 8, n)
	binary.BigEndian.PutUint32(out, uint32(n))
	copy(out[4:], typ)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// fullBox assembles a box that starts with a version byte and 24-bit flags.
func fullBox(typ string, version byte, flags uint32, parts ...[]byte) []byte {
	vf := u32(uint32(version)<<24 | flags&0xffffff)
	return box(typ, append([][]byte{vf}, parts...)...)
}

// identityMatrix is the unity transformation matrix of mvhd and tkhd.
func identityMatrix() []byte {
	m := make([]byte, 36)
	binary.BigEndian.PutUint32(m[0:], 0x00010000)
	binary.BigEndian.PutUint32(m[16:], 0x00010000)
	binary.BigEndian.PutUint32(m[32:], 0x40000000)
	return m
}

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func u16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
