package media

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
)

// MaxImageSide bounds the width and height PNG produces, so a mistaken
// request cannot make the reference server allocate gigabytes.
const MaxImageSide = 4096

// PNG returns a real PNG image of the given size: a diagonal two-color
// gradient with a checker overlay, both derived from seed. The output is
// deterministic for the same arguments. Sizes are clamped to
// 1..MaxImageSide.
func PNG(width, height int, seed string) []byte {
	width, height = clampSide(width), clampSide(height)
	s := seedBytes(seed)
	from := color.NRGBA{s[0], s[1], s[2], 255}
	to := color.NRGBA{s[3], s[4], s[5], 255}
	cell := 4 + int(s[6]%29) // checker cell size in pixels

	img := image.NewNRGBA(image.Rect(0, 0, width, height))
	span := width + height - 2
	if span == 0 {
		span = 1
	}
	for y := range height {
		for x := range width {
			t := (x + y) * 255 / span
			c := color.NRGBA{
				R: mix(from.R, to.R, t),
				G: mix(from.G, to.G, t),
				B: mix(from.B, to.B, t),
				A: 255,
			}
			if (x/cell+y/cell)%2 == 0 {
				// Darken alternate cells a little so the pattern is visible
				// but the gradient still dominates.
				c.R, c.G, c.B = c.R-c.R/8, c.G-c.G/8, c.B-c.B/8
			}
			img.SetNRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	// Encoding an in-memory NRGBA into a bytes.Buffer cannot fail.
	if err := png.Encode(&buf, img); err != nil {
		panic("media: png encode: " + err.Error())
	}
	return buf.Bytes()
}

// clampSide limits an image side to 1..MaxImageSide.
func clampSide(n int) int {
	return min(max(n, 1), MaxImageSide)
}

// mix interpolates between a and b; t runs from 0 to 255.
func mix(a, b uint8, t int) uint8 {
	return uint8((int(a)*(255-t) + int(b)*t) / 255)
}
