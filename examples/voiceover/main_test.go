package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With no key the example runs against the reference server from end to end.
func TestVoiceoverRunsOnTheReferenceServer(t *testing.T) {
	t.Setenv("MEDIAGEN_API_KEY", "")
	t.Setenv("MEDIAGEN_BASE_URL", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	text := out.String()
	assert.Contains(t, text, "in-process reference server")
	assert.Contains(t, text, "voice: ava-warm-narrator (Ava)")
	assert.Contains(t, text, "starred ava-warm-narrator")
	assert.Contains(t, text, "template: ")
	assert.Regexp(t, `estimate: audio/voiceover: .*= 0\.15 USD`, text)
	assert.Contains(t, text, "status: done")
	assert.Regexp(t, `downloaded [1-9]\d* bytes of audio/wav, \d+\.\d\d s`, text)
}

func TestWAVDuration(t *testing.T) {
	// 8 kHz 16-bit mono (16,000 bytes a second) with a LIST chunk before the data.
	var b bytes.Buffer
	b.WriteString("RIFF\x00\x00\x00\x00WAVE")
	b.WriteString("fmt \x10\x00\x00\x00")
	for _, v := range []any{uint16(1), uint16(1), uint32(8000), uint32(16000), uint16(2), uint16(16)} {
		require.NoError(t, binary.Write(&b, binary.LittleEndian, v))
	}
	b.WriteString("LIST\x03\x00\x00\x00abc\x00") // odd size, padded
	b.WriteString("data")
	require.NoError(t, binary.Write(&b, binary.LittleEndian, uint32(24000)))
	d, err := wavDuration(b.Bytes())
	require.NoError(t, err)
	assert.Equal(t, 1500*time.Millisecond, d)

	_, err = wavDuration([]byte("not a wav file"))
	assert.Error(t, err)
}
