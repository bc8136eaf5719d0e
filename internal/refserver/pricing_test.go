package refserver

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/feature"
)

func TestPricingTableIsServed(t *testing.T) {
	h := newHarness(t)
	resp, err := h.client(keyA).GetPricingWithResponse(context.Background())
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode())
	got := resp.JSON200.Prices
	for _, f := range feature.All {
		require.Contains(t, got, f.Name)
		assert.Positive(t, got[f.Name].Price)
		require.NotNil(t, got[f.Name].Unit)
	}
	require.Contains(t, got, feature.VoiceClone)
	assert.Equal(t, mediagen.PricingUnitCall, got[feature.VoiceClone].Unit)
	assert.Nil(t, got["image/self-portrait"].Variants, "variants only when an argument changes the price")
	require.NotNil(t, got["image/generation"].Variants)
	assert.Equal(t, map[string]map[string]float64{"fineDetails": {"off": 1, "on": 1.5}}, got["image/generation"].Variants)
	require.NotNil(t, got["video/logo-reveal"].Variants)
	assert.Equal(t, map[string]float64{"720p": 1, "1080p": 1.5}, (got["video/logo-reveal"].Variants)["resolution"])
	assert.Equal(t, mediagen.PricingUnitSecond, got[string(mediagen.FeatureVideoObjectReveal)].Unit)
	assert.Equal(t, mediagen.PricingUnitPer15Seconds, got["video/avatar"].Unit)
	assert.Equal(t, mediagen.PricingUnitPer1000Chars, got["audio/voiceover"].Unit)
	assert.Contains(t, string(resp.Body), `"price"`)
	assert.NotContains(t, string(resp.Body), `"amount"`)
}

func TestCostFormula(t *testing.T) {
	cases := []struct {
		feature string
		args    map[string]any
		want    float64
	}{
		{"image/generation", map[string]any{"prompt": "p"}, 0.04},
		{"image/generation", map[string]any{"prompt": "p", "fineDetails": true}, 0.06},
		{"image/ad", map[string]any{"fineDetails": false}, 0.08},
		{"image/self-portrait", map[string]any{}, 0.06},
		{"video/logo-reveal", map[string]any{}, 0.5},
		{"video/logo-reveal", map[string]any{"duration": 10.0, "resolution": "1080p"}, 1.5},
		{string(mediagen.FeatureVideoObjectReveal), map[string]any{"duration": 3.0}, 0.36},
		{"video/avatar", map[string]any{"script": "hi"}, 0.5},
		{"video/avatar", map[string]any{"script": strings.Repeat("a", 225)}, 0.5}, // 15 s clip
		{"video/avatar", map[string]any{"script": strings.Repeat("a", 226)}, 1.0}, // 16 s clip
		{"video/avatar", map[string]any{"script": strings.Repeat("a", 226), "resolution": "1080p"}, 1.5},
		{"audio/voiceover", map[string]any{"script": "hi"}, 0.15},
		{"audio/voiceover", map[string]any{"script": strings.Repeat("ü", 1000)}, 0.15},
		{"audio/voiceover", map[string]any{"script": strings.Repeat("ü", 1001)}, 0.3},
		{feature.VoiceClone, nil, 1},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, fromUnits(cost(tc.feature, tc.args)), "%s %v", tc.feature, len(stringArg(feature.Info{}, tc.args, "script")))
	}
}

func TestChargeMatchesPriceTable(t *testing.T) {
	h := newHarness(t)
	img := h.uploadImage(keyA)
	g := h.mustCreate(keyA, "video/logo-reveal", map[string]any{"image": img, "prompt": "p", "duration": 7, "resolution": "1080p"})
	assert.Equal(t, 1.05, g.BalanceUsed)
	g = h.mustCreate(keyA, "avatar-video", map[string]any{"voiceId": "ava-warm-narrator", "script": strings.Repeat("a", 400), "permissionConfirmed": true})
	assert.Equal(t, 1.0, g.BalanceUsed)
	assert.InDelta(t, 100-1.05-1.0, h.srv.Balance(keyA), 1e-9)
}
