package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The example runs against the in-process reference server, and a second
// run adds no job twice and charges nothing more.
func TestRun(t *testing.T) {
	t.Setenv("MEDIAGEN_API_KEY", "")
	t.Setenv("DATABASE_URL", "")
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), &out, dir))
	assert.Contains(t, out.String(), "0 queued, 0 rendering, 3 done, 0 failed")
	assert.Contains(t, out.String(), "order-2: audio/voiceover done")
}
