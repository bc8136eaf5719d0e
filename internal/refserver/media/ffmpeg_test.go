package media

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/needs"
)

// needTool returns the path of a program a decoder test runs; see package
// needs for what happens when it is missing.
func needTool(t *testing.T, name, pkg string) string { return needs.Program(t, name, pkg) }

// TestFFmpegDecodesEveryPictureExactly decodes clips with ffmpeg and
// compares every sample of every picture with what the scene drew: the
// encoder's premise is that flat macroblocks reconstruct exactly, so any
// syntax or prediction mistake shows up as a mismatch. The sound, being
// lossless, must decode to the very samples synthesised.
func TestFFmpegDecodesEveryPictureExactly(t *testing.T) {
	ffmpeg := needTool(t, "ffmpeg", "ffmpeg")
	for _, c := range []Clip{
		{Width: 200, Height: 120, Duration: 2500 * time.Millisecond, Palette: "small", Seed: "s", Sound: Speech},
		{Width: 96, Height: 64, Duration: 25 * time.Second / VideoFPS, Palette: "chime", Seed: "c", Sound: Chime},
		{Width: 1080, Height: 1920, Duration: 500 * time.Millisecond, Palette: "tall", Seed: "t", Background: "#102030"},
		{Width: 1920, Height: 1080, Duration: 500 * time.Millisecond, Palette: "wide", Seed: "w"},
	} {
		t.Run(fmt.Sprintf("%dx%d", c.Width, c.Height), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "clip.mp4")
			require.NoError(t, os.WriteFile(path, c.MP4(), 0o600))
			var out, errs bytes.Buffer
			cmd := exec.Command(ffmpeg, "-nostdin", "-v", "error", "-i", path, "-map", "0:v", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-")
			cmd.Stdout, cmd.Stderr = &out, &errs
			require.NoError(t, cmd.Run(), errs.String())
			assert.Empty(t, errs.String(), "ffmpeg reports no error")

			s := newScene(c.normalized())
			frame := c.Width * c.Height * 3 / 2
			require.Equal(t, s.frames*frame, out.Len(), "every frame, at the clip's size")
			pic := make([]ycc, s.mbW*s.mbH)
			raw := out.Bytes()
			for i := range s.frames {
				s.render(i, pic, nil)
				require.NoError(t, comparePicture(raw[i*frame:(i+1)*frame], pic, c.Width, c.Height, s.mbW), "frame %d", i)
			}
			if c.Sound == NoSound {
				return
			}
			// The sound decodes to exactly the samples synthesised.
			out.Reset()
			errs.Reset()
			cmd = exec.Command(ffmpeg, "-nostdin", "-v", "error", "-i", path, "-map", "0:a", "-f", "s16le", "-")
			cmd.Stdout, cmd.Stderr = &out, &errs
			require.NoError(t, cmd.Run(), errs.String())
			assert.Empty(t, errs.String(), "ffmpeg reports no error")
			want := clipPCM(c)
			require.Equal(t, 2*len(want), out.Len())
			for i, v := range want {
				require.Equal(t, v, int16(binary.LittleEndian.Uint16(out.Bytes()[2*i:])), "sample %d", i)
			}
		})
	}
}

// comparePicture checks planar 4:2:0 samples against macroblock colours.
func comparePicture(yuv []byte, pic []ycc, w, h, mbW int) error {
	cw, ch := w/2, h/2
	u, v := yuv[w*h:], yuv[w*h+cw*ch:]
	for y := range h {
		for x := range w {
			if want := pic[(y/16)*mbW+x/16].y; yuv[y*w+x] != want {
				return fmt.Errorf("luma at %d,%d is %d, want %d", x, y, yuv[y*w+x], want)
			}
		}
	}
	for y := range ch {
		for x := range cw {
			c := pic[(y/8)*mbW+x/8]
			if u[y*cw+x] != c.cb || v[y*cw+x] != c.cr {
				return fmt.Errorf("chroma at %d,%d is %d,%d, want %d,%d", x, y, u[y*cw+x], v[y*cw+x], c.cb, c.cr)
			}
		}
	}
	return nil
}
