package refserver

import (
	"fmt"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/feature"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// Media types of outputs.
const (
	mimePNG  = "image/png"
	mimeWAV  = "audio/wav"
	mimeMP4  = "video/mp4"
	mimeText = "text/plain"
)

// imageLongSide is the long side of generated images, in pixels.
const imageLongSide = 256

// outputSpec describes a generation's asset. The bytes are made when they
// are fetched, from the spec and the generation id, so memory does not grow
// with the number of finished generations.
type outputSpec struct {
	mime          string
	width, height int
	duration      time.Duration // video and audio
	chars         int           // script length, for the audio render time
	text          string        // text outputs
}

// outputFor derives the asset of a generation from its validated arguments.
func outputFor(info feature.Info, args map[string]any) outputSpec {
	switch info.Kind {
	case "video":
		aspect := stringArgOr(args, "aspectRatio", "16:9")
		w, h := videoSize(aspect, stringArgOr(args, "resolution", "720p"))
		d := time.Duration(intArg(args, "duration", defaultDuration)) * time.Second
		if info.Name == "video/avatar" {
			d = time.Duration(clipSeconds(stringArg(args, "script"))) * time.Second
		}
		return outputSpec{mime: mimeMP4, width: w, height: h, duration: d}
	case "audio":
		script := stringArg(args, "script")
		return outputSpec{mime: mimeWAV, duration: time.Duration(clipSeconds(script)) * time.Second, chars: runeCount(script)}
	case "text":
		return outputSpec{mime: mimeText, text: "Draft for: " + stringArg(args, "prompt")}
	default:
		def := "1:1"
		if info.Name == "image/youtube-thumbnail" {
			def = "16:9"
		}
		w, h := imageSize(stringArgOr(args, "aspectRatio", def))
		return outputSpec{mime: mimePNG, width: w, height: h}
	}
}

// aspectRatios maps an aspect ratio to width:height.
var aspectRatios = map[string][2]int{
	"16:9": {16, 9}, "9:16": {9, 16}, "4:3": {4, 3}, "3:4": {3, 4}, "1:1": {1, 1},
}

// imageSize is the size of a generated image: imageLongSide on the long
// side, the short side rounded to the aspect ratio.
func imageSize(aspect string) (int, int) {
	r, ok := aspectRatios[aspect]
	if !ok {
		r = [2]int{1, 1}
	}
	if r[0] >= r[1] {
		return imageLongSide, (imageLongSide*r[1] + r[0]/2) / r[0]
	}
	return (imageLongSide*r[0] + r[1]/2) / r[1], imageLongSide
}

// videoSize is the frame size of a video: the short side is 720 at 720p
// and 1080 at 1080p, the long side follows the aspect ratio.
func videoSize(aspect, res string) (int, int) {
	short := 720
	if res == "1080p" {
		short = 1080
	}
	r, ok := aspectRatios[aspect]
	if !ok {
		r = [2]int{16, 9}
	}
	if r[0] >= r[1] {
		return short * r[0] / r[1], short
	}
	return short, short * r[1] / r[0]
}

// Asset names under a generation's storage path.
const (
	assetImage  = "output.png"
	assetVideo  = "output.mp4"
	assetPoster = "poster.png"
	assetAudio  = "output.wav"
)

// outputView renders the output of a finished generation, its URLs signed
// until the generation expires (rounded up to the second the URL carries;
// the storage host also checks expiresAt itself). The caller holds s.mu.
func (s *Server) outputView(g *generation, base string) mediagen.Output {
	o := mediagen.Output{MIME: g.out.mime}
	asset := func(name string) string {
		return s.assetURL(base, "generations", g.id, name, ceilSecond(g.expiresAt))
	}
	switch g.kind {
	case "video":
		o.Video = asset(assetVideo)
		o.Poster = asset(assetPoster)
		o.DurationMs, o.Width, o.Height = int(g.out.duration/time.Millisecond), g.out.width, g.out.height
	case "audio":
		o.Audio = asset(assetAudio)
	case "text":
		o.Text = g.out.text
	default:
		o.Image = asset(assetImage)
	}
	return o
}

// assetBytes makes the bytes of one asset of a finished generation, and
// their media type.
func assetBytes(id string, spec outputSpec, name string) ([]byte, string, error) {
	switch {
	case name == assetImage && spec.mime == mimePNG:
		return media.PNG(spec.width, spec.height, id), mimePNG, nil
	case name == assetVideo && spec.mime == mimeMP4:
		return media.MP4(spec.duration, spec.width, spec.height), mimeMP4, nil
	case name == assetPoster && spec.mime == mimeMP4:
		return media.PNG(spec.width, spec.height, id), mimePNG, nil
	case name == assetAudio && spec.mime == mimeWAV:
		return media.WAV(spec.duration, id), mimeWAV, nil
	}
	return nil, "", fmt.Errorf("no asset %q", name)
}
