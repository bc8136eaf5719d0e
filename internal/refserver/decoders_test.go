package refserver

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/needs"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// needTool returns the path of a program a decoder test runs; see package
// needs for what happens when it is missing.
func needTool(t *testing.T, name, pkg string) string { return needs.Program(t, name, pkg) }

// probed is the part of ffprobe's JSON the decoder test reads.
type probed struct {
	Streams []struct {
		CodecType    string `json:"codec_type"`
		CodecName    string `json:"codec_name"`
		Width        int    `json:"width"`
		Height       int    `json:"height"`
		SampleRate   string `json:"sample_rate"`
		Duration     string `json:"duration"`
		NbReadFrames string `json:"nb_read_frames"`
	} `json:"streams"`
}

// meanVolume matches volumedetect's report of the average loudness.
var meanVolume = regexp.MustCompile(`mean_volume: (-?[0-9.]+) dB`)

// TestFFmpegDecodesEveryOutput runs the outputs of every video feature (both
// resolutions, several aspect ratios, with and without sound) and a
// voiceover through ffprobe, counting frames, and through ffmpeg, which must
// decode them to the end without an error line; sound must be audible.
func TestFFmpegDecodesEveryOutput(t *testing.T) {
	ffprobe := needTool(t, "ffprobe", "ffmpeg")
	ffmpeg := needTool(t, "ffmpeg", "ffmpeg")
	h := newHarness(t)
	img := h.uploadImage(keyA)
	avatar := func(script, aspect, res string) map[string]any {
		return map[string]any{"voiceId": "ava-warm-narrator", "script": script, "permissionConfirmed": true, "aspectRatio": aspect, "resolution": res}
	}
	cases := []struct {
		name    string
		feature string
		args    map[string]any
		w, h    int
		seconds int
		sound   bool
	}{
		{"logo 16:9 720p 6s sound", "video/logo-reveal", map[string]any{"image": img, "prompt": "sparks", "duration": 6, "generateAudio": true}, 1280, 720, 6, true},
		{"logo 9:16 1080p sound", "video/logo-reveal", map[string]any{"image": img, "prompt": "p", "aspectRatio": "9:16", "resolution": "1080p", "duration": 3, "generateAudio": true, "background": "#123"}, 1080, 1920, 3, true},
		{"logo 16:9 1080p silent", "video/logo-reveal", map[string]any{"image": img, "prompt": "p", "resolution": "1080p", "duration": 3, "generateAudio": false}, 1920, 1080, 3, false},
		{"logo default", "video/logo-reveal", map[string]any{"image": img, "prompt": "p"}, 1280, 720, 5, false},
		{"object 1:1 720p", string(mediagen.FeatureVideoObjectReveal), map[string]any{"image": img, "prompt": "p", "aspectRatio": "1:1", "duration": 3}, 720, 720, 3, false},
		{"object 4:3 1080p", string(mediagen.FeatureVideoObjectReveal), map[string]any{"image": img, "prompt": "p", "aspectRatio": "4:3", "resolution": "1080p", "duration": 3}, 1440, 1080, 3, false},
		{"object 3:4 720p", string(mediagen.FeatureVideoObjectReveal), map[string]any{"image": img, "prompt": "p", "aspectRatio": "3:4", "duration": 3}, 720, 960, 3, false},
		{"avatar 16:9 720p", "video/avatar", avatar("Forty characters of script, to be read.", "16:9", "720p"), 1280, 720, 3, true},
		{"avatar 3:4 1080p", "video/avatar", avatar("Twenty characters!!!", "3:4", "1080p"), 1080, 1440, 2, true},
	}
	dir := t.TempDir()
	files := make([]string, len(cases))
	for i, tc := range cases {
		o := h.finish(tc.feature, tc.args).Output
		files[i] = filepath.Join(dir, fmt.Sprintf("%d.mp4", i))
		require.NoError(t, os.WriteFile(files[i], h.fetch(o.Video, "video/mp4"), 0o600))
	}
	voice := h.finish("audio/voiceover", map[string]any{"voiceId": "ava-warm-narrator", "script": strings.Repeat("Words to say. ", 7)}).Output
	voiceFile := filepath.Join(dir, "voice.wav")
	require.NoError(t, os.WriteFile(voiceFile, h.fetch(voice.Audio, "audio/wav"), 0o600))

	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := probe(t, ffprobe, files[i])
			require.NotEmpty(t, p.Streams)
			v := p.Streams[0]
			assert.Equal(t, "video", v.CodecType)
			assert.Equal(t, "h264", v.CodecName)
			assert.Equal(t, [2]int{tc.w, tc.h}, [2]int{v.Width, v.Height})
			assert.Equal(t, strconv.Itoa(tc.seconds*media.VideoFPS), v.NbReadFrames, "duration x frame rate")
			assert.Equal(t, fmt.Sprintf("%d.000000", tc.seconds), v.Duration)
			if !tc.sound {
				assert.Len(t, p.Streams, 1, "no audio track")
			} else if assert.Len(t, p.Streams, 2) {
				a := p.Streams[1]
				assert.Equal(t, [2]string{"audio", "flac"}, [2]string{a.CodecType, a.CodecName})
				assert.Equal(t, v.Duration, a.Duration, "the sound lasts as long as the video")
				assertAudible(t, ffmpeg, files[i])
			}
			assertDecodesCleanly(t, ffmpeg, files[i])
		})
	}
	t.Run("voiceover", func(t *testing.T) {
		t.Parallel()
		p := probe(t, ffprobe, voiceFile)
		require.Len(t, p.Streams, 1)
		assert.Equal(t, [2]string{"audio", "pcm_u8"}, [2]string{p.Streams[0].CodecType, p.Streams[0].CodecName})
		assert.Equal(t, "7.000000", p.Streams[0].Duration, "98 characters at 15 a second")
		assertAudible(t, ffmpeg, voiceFile)
		assertDecodesCleanly(t, ffmpeg, voiceFile)
	})
}

// probe runs ffprobe, decoding every frame to count them.
func probe(t *testing.T, ffprobe, file string) probed {
	t.Helper()
	out, err := exec.Command(ffprobe, "-v", "error", "-count_frames", "-of", "json",
		"-show_entries", "stream=codec_type,codec_name,width,height,sample_rate,duration,nb_read_frames", file).Output()
	require.NoError(t, err)
	var p probed
	require.NoError(t, json.Unmarshal(out, &p), string(out))
	return p
}

// assertDecodesCleanly decodes every stream to the end: ffmpeg at level
// error prints nothing for a sound file.
func assertDecodesCleanly(t *testing.T, ffmpeg, file string) {
	t.Helper()
	out, err := exec.Command(ffmpeg, "-nostdin", "-v", "error", "-i", file, "-f", "null", "-").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Empty(t, string(out), "ffmpeg reports no error")
}

// assertAudible measures the decoded sound's mean volume.
func assertAudible(t *testing.T, ffmpeg, file string) {
	t.Helper()
	out, err := exec.Command(ffmpeg, "-nostdin", "-i", file, "-map", "0:a", "-af", "volumedetect", "-f", "null", "-").CombinedOutput()
	require.NoError(t, err, string(out))
	m := meanVolume.FindSubmatch(out)
	require.NotNil(t, m, "volumedetect reports a mean volume")
	db, err := strconv.ParseFloat(string(m[1]), 64)
	require.NoError(t, err)
	assert.Greater(t, db, -30.0, "audible: mean volume above -30 dB")
}
