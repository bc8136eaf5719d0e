package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's quickstart command must work on a machine with no key.
func TestQuickstartRunsOnTheReferenceServer(t *testing.T) {
	t.Setenv("MEDIAGEN_API_KEY", "")
	t.Setenv("MEDIAGEN_BASE_URL", "")
	outputDir = t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	text := out.String()
	assert.Contains(t, text, "in-process reference server")
	assert.Contains(t, text, "estimate:")
	assert.Contains(t, text, "uploaded logo: ")
	assert.Contains(t, text, "status: done")
	assert.Regexp(t, `done: video/mp4, \d+x\d+, 5000 ms`, text)
	assert.Regexp(t, `saved .*/g[^/]*\.mp4\n`, text)
	assert.Regexp(t, `saved .*/g[^/]*\.poster\.png\n`, text)
	files, err := filepath.Glob(filepath.Join(outputDir, "*"))
	require.NoError(t, err)
	require.Len(t, files, 2, "the video and its poster, no partial file")
	for _, f := range files {
		info, err := os.Stat(f)
		require.NoError(t, err)
		assert.Positive(t, info.Size(), f)
	}
}
