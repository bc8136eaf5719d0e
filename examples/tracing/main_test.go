package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTracingPrintsTheJob(t *testing.T) {
	t.Setenv("MEDIAGEN_API_KEY", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, t.TempDir()))
	for _, name := range []string{`"Name": "mediagen.generation"`, `"Name": "mediagen.wait"`, `"Name": "mediagen.save"`, `"Name": "POST"`, `"Name": "GET"`} {
		assert.Contains(t, out.String(), name)
	}
	assert.Equal(t, 1, strings.Count(out.String(), `"Name": "mediagen.generation"`))
	assert.Contains(t, out.String(), "saved under")
}
