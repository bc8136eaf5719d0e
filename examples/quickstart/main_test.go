package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's quickstart command must work on a machine with no key.
func TestQuickstartRunsOnTheReferenceServer(t *testing.T) {
	t.Setenv("MEDIAGEN_API_KEY", "")
	t.Setenv("MEDIAGEN_BASE_URL", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	text := out.String()
	assert.Contains(t, text, "in-process reference server")
	assert.Contains(t, text, "estimate:")
	assert.Contains(t, text, "uploaded logo: ")
	assert.Contains(t, text, "status: done")
	assert.Regexp(t, `done: video/mp4, \d+x\d+, 5000 ms`, text)
	assert.Regexp(t, `downloaded [1-9]\d* bytes of video/mp4`, text)
}
