package client

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSearchKeyIgnoresHowArgsCame: a create's search and a FindGeneration
// for the same arguments serialize on one key, whether the arguments came
// typed (fields in struct order) or raw (a map).
func TestSearchKeyIgnoresHowArgsCame(t *testing.T) {
	c, err := New("mg_key_123456", WithBaseURL("https://api.example.com"))
	require.NoError(t, err)
	key := func(args Args) string {
		t.Helper()
		a, err := encodeArgs(args)
		require.NoError(t, err)
		return (&generationOp{c: c, cfg: c.base, args: a}).Key()
	}
	typed := LogoRevealArgs{Image: "file_1", Mode: "fast", Prompt: "gold", AspectRatio: Aspect16x9}
	raw := RawArgs{FeatureName: typed.Feature(), Values: map[string]any{"prompt": "gold", "aspectRatio": "16:9", "mode": "fast", "image": "file_1"}}
	assert.Equal(t, key(typed), key(raw))
	other := typed
	other.Prompt = "silver"
	assert.NotEqual(t, key(typed), key(other))
}
