package client

import (
	"net/http"
	"testing"
	"time"

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

// TestServerDateReadsEachAnswer: the parsed Date reused is the answer's own.
func TestServerDateReadsEachAnswer(t *testing.T) {
	answer := func(date string) *http.Response { return &http.Response{Header: http.Header{"Date": {date}}} }
	first := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for _, d := range []time.Time{first, first, first.Add(time.Second), first} {
		assert.True(t, d.Equal(serverDate(answer(d.Format(http.TimeFormat)))), "%v", d)
	}
	assert.True(t, serverDate(answer("not a date")).IsZero())
	assert.True(t, serverDate(&http.Response{Header: http.Header{}}).IsZero())
	assert.True(t, serverDate(nil).IsZero())
	assert.True(t, first.Equal(serverDate(answer(first.Format(http.TimeFormat)))))
}
