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

	// What the media are derived from. The strings are the generation's
	// own arguments, shared, not copied.
	palette    string      // video: seeds the colours (the prompt, else the script)
	background string      // video/logo-reveal: the first gradient colour
	sound      media.Sound // video: the audio track, if any
	voice      string      // audio and avatar: seeds the voice
	script     string      // audio and avatar: seeds the rhythm of speech
}

// outputFor derives the asset of a generation from its validated arguments.
func outputFor(info feature.Info, args map[string]any) outputSpec {
	switch info.Kind {
	case "video":
		w, h := videoSize(stringArg(info, args, "aspectRatio"), stringArg(info, args, "resolution"))
		spec := outputSpec{
			mime: mimeMP4, width: w, height: h,
			duration:   time.Duration(intArg(info, args, "duration")) * time.Second,
			palette:    stringArg(info, args, "prompt"),
			background: stringArg(info, args, "background"),
		}
		if on, _ := args["generateAudio"].(bool); on {
			spec.sound = media.Chime
		}
		if info.Name == "video/avatar" {
			// The clip lasts as long as its script takes to say, and says it.
			script := stringArg(info, args, "script")
			spec.duration = time.Duration(clipSeconds(script)) * time.Second
			spec.sound, spec.voice, spec.script = media.Speech, stringArg(info, args, "voiceId"), script
			if spec.palette == "" {
				spec.palette = script
			}
		}
		return spec
	case "audio":
		script := stringArg(info, args, "script")
		return outputSpec{
			mime: mimeWAV, duration: time.Duration(clipSeconds(script)) * time.Second, chars: runeCount(script),
			voice: stringArg(info, args, "voiceId"), script: script,
		}
	case "text":
		return outputSpec{mime: mimeText, text: "Draft for: " + stringArg(info, args, "prompt")}
	default:
		w, h := imageSize(stringArg(info, args, "aspectRatio"))
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
		return spec.clip(id).MP4(), mimeMP4, nil
	case name == assetPoster && spec.mime == mimeMP4:
		return spec.clip(id).Poster(), mimePNG, nil
	case name == assetAudio && spec.mime == mimeWAV:
		return media.SpeechWAV(spec.duration, spec.voice, spec.script), mimeWAV, nil
	}
	return nil, "", fmt.Errorf("no asset %q", name)
}

// clip describes a video output to the renderer; the generation id varies
// the motion, so two generations of one prompt share colours, not paths.
func (spec outputSpec) clip(id string) media.Clip {
	text := spec.script
	if text == "" {
		text = id
	}
	voice := spec.voice
	if voice == "" {
		voice = spec.palette
	}
	return media.Clip{
		Width: spec.width, Height: spec.height, Duration: spec.duration,
		Palette: spec.palette, Background: spec.background, Seed: id,
		Sound: spec.sound, Voice: voice, Text: text,
	}
}
