package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun runs the example as the README does, with no configuration.
func TestRun(t *testing.T) {
	t.Setenv("MEDIAGEN_API_KEY", "")
	t.Setenv("TEMPORAL_ADDRESS", "")
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), &out))
	assert.Contains(t, out.String(), "in-process reference server")
	lines := 0
	for line := range strings.Lines(out.String()) {
		if strings.Contains(line, " done (key temporal:") {
			lines++
			path := strings.TrimSpace(line[strings.LastIndex(line, " saved to ")+len(" saved to "):])
			assert.FileExists(t, path)
			t.Cleanup(func() { os.RemoveAll(filepath.Dir(path)) })
		}
	}
	assert.Equal(t, 2, lines, out.String())
}
