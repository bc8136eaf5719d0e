package media

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"strconv"
	"time"
)

// Video output limits and frame rate.
const (
	// VideoFPS is the frame rate of every video.
	VideoFPS = 24
	// MaxVideoSide bounds the width and height of a video (H.264 level
	// 5.1 decodes up to 1920x1920 at VideoFPS).
	MaxVideoSide = 1920
	// MinVideoSide is the smallest width or height: one macroblock.
	MinVideoSide = 16
	// MaxMP4Duration bounds video length; longer requests are clamped.
	MaxMP4Duration = 10 * time.Minute
)

// Clip describes a generated video: an H.264 track of flat-coloured
// macroblocks where a block slides across a gradient and a progress bar
// fills the bottom row, and optionally an audio track.
type Clip struct {
	// Width and Height are the frame size, rounded down to even numbers and
	// clamped to MinVideoSide..MaxVideoSide.
	Width, Height int
	// Duration is rounded to whole frames (at least one) and clamped to
	// MaxMP4Duration.
	Duration time.Duration
	// Palette seeds the colours, so one prompt keeps its look.
	Palette string
	// Background, a "#rgb" or "#rrggbb" colour, replaces the palette's
	// first gradient colour when it parses.
	Background string
	// Seed varies the path of the moving block (a generation id).
	Seed string
	// Sound chooses the audio track; NoSound leaves it out.
	Sound Sound
	// Voice seeds the pitch of the sound; Text seeds its rhythm.
	Voice, Text string
}

// normalized applies the documented rounding and clamping.
func (c Clip) normalized() Clip {
	side := func(n int) int { return min(max(n, MinVideoSide), MaxVideoSide) &^ 1 }
	c.Width, c.Height = side(c.Width), side(c.Height)
	c.Duration = min(max(c.Duration, 0), MaxMP4Duration)
	return c
}

// frames is the number of pictures: Duration x VideoFPS, at least one.
func (c Clip) frames() int {
	n := int((c.Duration*VideoFPS + time.Second/2) / time.Second)
	return max(n, 1)
}

// scene draws the pictures of a clip in macroblock units.
type scene struct {
	mbW, mbH, frames int
	bg               []ycc         // the gradient and checker, every picture
	bgRGB            []color.NRGBA // the same, for the poster
	block, bar       ycc
	blockRGB, barRGB color.NRGBA
	side             int // of the square block, in macroblocks
	fromY, toY       int // rows where the block starts and ends its path
}

// newScene derives colours and the path from the clip.
func newScene(c Clip) *scene {
	s := &scene{mbW: (c.Width + 15) / 16, mbH: (c.Height + 15) / 16, frames: c.frames()}
	p, m := seedBytes(c.Palette), seedBytes(c.Seed)
	from, to := color.NRGBA{p[0], p[1], p[2], 255}, color.NRGBA{p[3], p[4], p[5], 255}
	if bg, ok := parseHexColor(c.Background); ok {
		from = bg
	}
	cell := 1 + int(p[6]%3) // checker cell, in macroblocks
	// The block takes the colour opposite the gradient's middle, so it
	// stands out; the bar is halfway between it and white.
	mid := func(a, b uint8) uint8 { return 255 - uint8((int(a)+int(b))/2) }
	s.blockRGB = color.NRGBA{mid(from.R, to.R), mid(from.G, to.G), mid(from.B, to.B), 255}
	s.barRGB = color.NRGBA{uint8((int(s.blockRGB.R) + 255) / 2), uint8((int(s.blockRGB.G) + 255) / 2), uint8((int(s.blockRGB.B) + 255) / 2), 255}
	s.block, s.bar = toYCC(s.blockRGB), toYCC(s.barRGB)

	s.bg, s.bgRGB = make([]ycc, s.mbW*s.mbH), make([]color.NRGBA, s.mbW*s.mbH)
	span := max(s.mbW+s.mbH-2, 1)
	for y := range s.mbH {
		for x := range s.mbW {
			t := (x + y) * 255 / span
			col := color.NRGBA{mix(from.R, to.R, t), mix(from.G, to.G, t), mix(from.B, to.B, t), 255}
			if (x/cell+y/cell)%2 == 0 {
				col.R, col.G, col.B = col.R-col.R/8, col.G-col.G/8, col.B-col.B/8
			}
			s.bgRGB[y*s.mbW+x], s.bg[y*s.mbW+x] = col, toYCC(col)
		}
	}
	s.side = max(1, min(s.mbH-1, s.mbW)/3)
	room := max(s.mbH-1-s.side, 0) // the bottom row is the bar's
	s.fromY, s.toY = int(m[0])%(room+1), int(m[1])%(room+1)
	return s
}

// render draws picture i into pic (and into rgb, when not nil).
func (s *scene) render(i int, pic []ycc, rgb []color.NRGBA) {
	copy(pic, s.bg)
	if rgb != nil {
		copy(rgb, s.bgRGB)
	}
	paint := func(x0, y0, x1, y1 int, c ycc, cr color.NRGBA) {
		for y := max(y0, 0); y < min(y1, s.mbH); y++ {
			for x := max(x0, 0); x < min(x1, s.mbW); x++ {
				pic[y*s.mbW+x] = c
				if rgb != nil {
					rgb[y*s.mbW+x] = cr
				}
			}
		}
	}
	// The block crosses from the left edge to the right one over the clip.
	last := max(s.frames-1, 1)
	bx := (s.mbW - s.side) * i / last
	by := s.fromY + (s.toY-s.fromY)*i/last
	paint(bx, by, bx+s.side, by+s.side, s.block, s.blockRGB)
	paint(0, s.mbH-1, s.mbW*(i+1)/s.frames, s.mbH, s.bar, s.barRGB)
}

// Poster returns the first picture of the clip as a PNG of the clip's size.
func (c Clip) Poster() []byte {
	c = c.normalized()
	s := newScene(c)
	pic, rgb := make([]ycc, s.mbW*s.mbH), make([]color.NRGBA, s.mbW*s.mbH)
	s.render(0, pic, rgb)
	img := image.NewNRGBA(image.Rect(0, 0, c.Width, c.Height))
	for y := range c.Height {
		row := img.Pix[y*img.Stride : y*img.Stride+4*c.Width]
		if y%16 != 0 {
			copy(row, img.Pix[(y-1)*img.Stride:]) // same macroblock row
			continue
		}
		for x := range c.Width {
			col := rgb[(y/16)*s.mbW+x/16]
			row[4*x], row[4*x+1], row[4*x+2], row[4*x+3] = col.R, col.G, col.B, 255
		}
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		panic("media: png encode: " + err.Error()) // cannot fail on a buffer
	}
	return buf.Bytes()
}

// toYCC converts to limited-range BT.709, which the stream signals.
func toYCC(c color.NRGBA) ycc {
	r, g, b := float64(c.R)/255, float64(c.G)/255, float64(c.B)/255
	y := 0.2126*r + 0.7152*g + 0.0722*b
	round := func(v float64) uint8 { return uint8(min(max(math.Round(v), 0), 255)) }
	return ycc{
		y:  round(16 + 219*y),
		cb: round(128 + 224*(b-y)/1.8556),
		cr: round(128 + 224*(r-y)/1.5748),
	}
}

// parseHexColor reads "#rgb" or "#rrggbb".
func parseHexColor(s string) (color.NRGBA, bool) {
	if len(s) == 4 && s[0] == '#' {
		s = "#" + s[1:2] + s[1:2] + s[2:3] + s[2:3] + s[3:4] + s[3:4]
	}
	if len(s) != 7 || s[0] != '#' {
		return color.NRGBA{}, false
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return color.NRGBA{}, false
	}
	return color.NRGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}, true
}
