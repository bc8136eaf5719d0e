package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBlobsaveKeepsOutputsInABucket(t *testing.T) {
	t.Setenv("MEDIAGEN_API_KEY", "")
	t.Setenv("MEDIAGEN_BUCKET", "file://"+t.TempDir())
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, 2, strings.Count(out.String(), "saved "), out.String())
	assert.Contains(t, out.String(), "image/png")
}
