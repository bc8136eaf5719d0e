package upload

import (
	"archive/zip"
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// sample is a small file of one accepted type, real enough for the
// reference server's content checks.
type sample struct {
	name     string
	content  []byte
	declared string // "" means detect
	want     string // media type reserved or sent
}

// samples returns one file of every accepted media type.
func samples(t *testing.T) []sample {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	var jp, gf, zp bytes.Buffer
	require.NoError(t, jpeg.Encode(&jp, img, nil))
	pal := image.NewPaletted(img.Bounds(), []color.Color{color.Black, color.White})
	require.NoError(t, gif.Encode(&gf, pal, nil))
	zw := zip.NewWriter(&zp)
	w, err := zw.Create("brief.txt")
	require.NoError(t, err)
	_, err = w.Write([]byte("a brief"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())

	pad := bytes.Repeat([]byte{0x11}, 64)
	webm := []byte("\x1a\x45\xdf\xa3\x87\x42\x82\x84webm")
	audioWebM := append(append([]byte{}, webm...), "\x16\x54\xae\x6b\x85\xae\x83\x83\x81\x02"...)
	return []sample{
		{"logo.png", media.PNG(16, 16, "logo"), "", "image/png"},
		{"photo.jpg", jp.Bytes(), "", "image/jpeg"},
		{"anim.gif", gf.Bytes(), "", "image/gif"},
		{"still.webp", append([]byte("RIFF\x4c\x00\x00\x00WEBPVP8 "), pad...), "", "image/webp"},
		{"voice.wav", media.WAV(time.Second, "voice"), "", "audio/wav"},
		{"voice.mp3", append([]byte(headMP3), pad...), "", "audio/mpeg"},
		{"voice.ogg", append([]byte(headOGG), pad...), "", "audio/ogg"},
		{"voice.flac", append([]byte(headFLAC), pad...), "", "audio/flac"},
		{"voice.m4a", append([]byte(headM4A), pad...), "", "audio/mp4"},
		{"voice.weba", audioWebM, "audio/webm", "audio/webm"},
		{"clip.mp4", media.MP4(time.Second, 64, 36), "", "video/mp4"},
		{"clip.mov", append([]byte(headMOV), pad...), "", "video/quicktime"},
		{"clip.webm", webm, "", "video/webm"},
		{"brief.pdf", []byte("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"), "", "application/pdf"},
		{"brief.zip", zp.Bytes(), "", "application/zip"},
		{"args.json", []byte(`{"prompt": "a lighthouse at dusk"}`), "", "application/json"},
		{"notes.txt", []byte("Slow zoom, warm light.\n"), "", "text/plain"},
		{"notes.md", []byte("# Notes\n\nSlow zoom.\n"), "", "text/markdown"},
		{"shots.csv", []byte("shot,seconds\nintro,3\n"), "", "text/csv"},
	}
}
