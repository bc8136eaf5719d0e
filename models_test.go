package mediagen_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
)

func TestTerminal(t *testing.T) {
	for status, want := range map[mediagen.GenerationStatus]bool{
		mediagen.GenerationStatusPending: false, mediagen.GenerationStatusRunning: false,
		mediagen.GenerationStatusDone: true, mediagen.GenerationStatusError: true, mediagen.GenerationStatusTimeout: true,
	} {
		assert.Equal(t, want, status.Terminal(), status)
		g := mediagen.Generation{Status: status}
		assert.Equal(t, want, g.Terminal(), status)
	}
	assert.False(t, mediagen.VoiceStatusRunning.Terminal())
	assert.True(t, mediagen.VoiceStatusDone.Terminal())
	assert.True(t, mediagen.VoiceStatusError.Terminal())
}

func TestFailed(t *testing.T) {
	for status, want := range map[mediagen.GenerationStatus]bool{
		mediagen.GenerationStatusPending: false, mediagen.GenerationStatusRunning: false, mediagen.GenerationStatusDone: false,
		mediagen.GenerationStatusError: true, mediagen.GenerationStatusTimeout: true,
	} {
		assert.Equal(t, want, status.Failed(), status)
	}
}

func TestOutputURL(t *testing.T) {
	for _, tc := range []struct {
		out  mediagen.Output
		want string
	}{
		{mediagen.Output{Image: "https://s/i.png", MIME: "image/png"}, "https://s/i.png"},
		{mediagen.Output{Video: "https://s/v.mp4", Poster: "https://s/p.png", MIME: "video/mp4"}, "https://s/v.mp4"},
		{mediagen.Output{Audio: "https://s/a.wav", MIME: "audio/wav"}, "https://s/a.wav"},
		{mediagen.Output{Text: "hello", MIME: "text/plain"}, ""},
		{mediagen.Output{}, ""},
	} {
		assert.Equal(t, tc.want, tc.out.URL(), tc.out.MIME)
	}
	var pending mediagen.Generation
	assert.Empty(t, pending.Output.URL(), "no nil check before the output exists")
}

func TestCatalogVoicesAlwaysCarryFavorite(t *testing.T) {
	b, err := json.Marshal(mediagen.Voice{ID: "v1", Owner: mediagen.VoiceOwnerService, Name: "Ada"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"v1","owner":"service","name":"Ada","favorite":false}`, string(b))

	b, err = json.Marshal(mediagen.Voice{ID: "c1", Owner: mediagen.VoiceOwnerProject, Name: "Mine", Status: mediagen.VoiceStatusRunning})
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"c1","owner":"project","name":"Mine","status":"running"}`, string(b), "a clone cannot be starred")

	var v mediagen.Voice
	require.NoError(t, json.Unmarshal([]byte(`{"id":"v1","owner":"service","name":"Ada","favorite":true}`), &v))
	assert.True(t, v.Favorite)
}

func TestPricingEntryReadsAmountAsPrice(t *testing.T) {
	for body, want := range map[string]float64{
		`{"price":0.5,"unit":"second"}`:             0.5,
		`{"amount":0.25,"unit":"call"}`:             0.25,
		`{"price":0.5,"amount":9,"unit":"call"}`:    0.5, // price wins
		`{"price":0,"amount":9,"unit":"call"}`:      0,   // a free feature stays free
		`{"unit":"call","variants":{"a":{"on":2}}}`: 0,
	} {
		var e mediagen.PricingEntry
		require.NoError(t, json.Unmarshal([]byte(body), &e), body)
		assert.Equal(t, want, e.Price, body)
	}
	var e mediagen.PricingEntry
	require.NoError(t, json.Unmarshal([]byte(`{"price":1,"unit":"1000chars","variants":{"resolution":{"720p":1,"1080p":1.5}}}`), &e))
	assert.Equal(t, mediagen.PricingEntry{Price: 1, Unit: mediagen.PricingUnitPer1000Chars,
		Variants: map[string]map[string]float64{"resolution": {"720p": 1, "1080p": 1.5}}}, e)
	assert.Error(t, json.Unmarshal([]byte(`{"price":"cheap"}`), &e))
}

func TestUploadHeadersCarryTheLengthAsAString(t *testing.T) {
	var u mediagen.UploadURL
	require.NoError(t, json.Unmarshal([]byte(`{"file":{"id":"file_1"},"uploadUrl":"https://s/u","method":"PUT",
		"headers":{"Content-Type":"image/png","Content-Length":"1234"},"expiresIn":900}`), &u))
	assert.Equal(t, int64(1234), u.Headers.ContentLength)
	assert.Equal(t, "file_1", u.File.ID)
	b, err := json.Marshal(u.Headers)
	require.NoError(t, err)
	assert.JSONEq(t, `{"Content-Type":"image/png","Content-Length":"1234"}`, string(b))
}
