package main

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With no key the example meets both ways a batch comes back short: a
// request refused for balance and a render that fails and is refunded.
func TestBatchRunsOnTheReferenceServer(t *testing.T) {
	t.Setenv("MEDIAGEN_API_KEY", "")
	t.Setenv("MEDIAGEN_BASE_URL", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	text := out.String()
	assert.Contains(t, text, "in-process reference server")
	assert.Len(t, regexp.MustCompile(`uploaded \w+\.png: \S+, [1-9]\d* bytes`).FindAllString(text, -1), 3)
	assert.Contains(t, text, "estimate: 5 generations, $0.2750 (budget $1.00)")
	assert.Contains(t, text, "refused image/youtube-thumbnail: costs $0.0750, balance $0.0000")
	assert.Len(t, regexp.MustCompile(`image/product-shot done: image/png`).FindAllString(text, -1), 3)
	assert.Regexp(t, `image/youtube-thumbnail error: .+ \(refunded \$0\.0500\)`, text)
	assert.Contains(t, text, "balance before: $0.2000")
	assert.Contains(t, text, "paid $0.1500 for what was done")
	assert.Contains(t, text, "balance after: $0.0500") // the failed thumbnail's $0.05 came back
}
