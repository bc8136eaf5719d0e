package main

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With no key the example receives real signed deliveries from the
// reference server on a loopback receiver.
func TestWebhooksRunsOnTheReferenceServer(t *testing.T) {
	t.Setenv("MEDIAGEN_API_KEY", "")
	t.Setenv("MEDIAGEN_BASE_URL", "")
	t.Setenv("MEDIAGEN_WEBHOOK_URL", "")
	t.Setenv("MEDIAGEN_WEBHOOK_DB_DSN", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	text := out.String()
	assert.Contains(t, text, "in-process reference server")
	assert.Contains(t, text, "delivery store: SQLite")
	submitted := regexp.MustCompile(`submitted (\S+)`).FindAllStringSubmatch(text, -1)
	require.Len(t, submitted, 3)
	for _, m := range submitted {
		assert.Contains(t, text, "event generation.done "+m[1])
		assert.Contains(t, text, "done "+m[1]+" image/png, saved")
	}
	assert.Regexp(t, `duplicate of \S+: answered 200, handler called 1 time\(s\)`, text)
}

// A key without a public receiver cannot work: say so before spending.
func TestWebhooksNeedsAReceiverWithAKey(t *testing.T) {
	t.Setenv("MEDIAGEN_API_KEY", "some-key")
	t.Setenv("MEDIAGEN_WEBHOOK_URL", "")
	t.Setenv("MEDIAGEN_WEBHOOK_SECRET", "")
	err := run(context.Background(), &bytes.Buffer{})
	assert.ErrorContains(t, err, "MEDIAGEN_WEBHOOK_URL")
}
