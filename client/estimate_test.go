package client_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
)

// testPricing is a price list in the service's format.
func testPricing(t *testing.T) client.Pricing {
	t.Helper()
	var p client.Pricing
	require.NoError(t, json.Unmarshal([]byte(`{
		"image/generation": {"price": 0.04, "unit": "call", "variants": {"fineDetails": {"off": 1, "on": 1.5}}},
		"video/logo-reveal": {"price": 0.10, "unit": "second", "variants": {"resolution": {"720p": 1, "1080p": 1.5}, "generateAudio": {"off": 1, "on": 1.2}}},
		"video/avatar": {"price": 0.50, "unit": "15s", "variants": {"resolution": {"720p": 1, "1080p": 1.5}}},
		"audio/voiceover": {"price": 0.15, "unit": "1000chars"},
		"audio/voice-clone": {"price": 1.00, "unit": "call"}
	}`), &p))
	return p
}

func TestEstimate(t *testing.T) {
	p := testPricing(t)
	for _, tc := range []struct {
		name     string
		feature  mediagen.Feature
		args     any
		min, max float64
		units    [2]int
		text     string
	}{
		{"flat, variant at its default", mediagen.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: "p"}, 0.04, 0.04, [2]int{1, 1},
			"image/generation: 0.04 USD/call × 1 (fineDetails=off, default) = 0.04 USD"},
		{"boolean variant on", mediagen.FeatureImageGeneration, map[string]any{"prompt": "p", "fineDetails": true}, 0.06, 0.06, [2]int{1, 1},
			"image/generation: 0.04 USD/call × 1.5 (fineDetails=on) = 0.06 USD"},
		{"legacy spelling", "image-generation", map[string]any{"prompt": "p", "fineDetails": false}, 0.04, 0.04, [2]int{1, 1}, ""},
		{"per second, duration defaults to 5", mediagen.FeatureVideoLogoReveal, client.LogoRevealArgs{Image: "f", Prompt: "p"}, 0.5, 0.5, [2]int{5, 5},
			"video/logo-reveal: 0.1 USD/second × 1 (generateAudio=off, default) × 1 (resolution=720p, default) × 5 seconds = 0.5 USD"},
		{"every multiplier, in argument order", mediagen.FeatureVideoLogoReveal, client.LogoRevealArgs{Image: "f", Prompt: "p", Duration: 8, Resolution: client.Resolution1080p, GenerateAudio: true}, 1.44, 1.44, [2]int{8, 8}, ""},
		{"per started 1,000 characters", mediagen.FeatureAudioVoiceover, client.VoiceoverArgs{VoiceID: "v", Script: strings.Repeat("a", 2001)}, 0.45, 0.45, [2]int{3, 3},
			"audio/voiceover: 0.15 USD/1000chars × 3 started 1,000 chars = 0.45 USD"},
		{"characters, not bytes", mediagen.FeatureAudioVoiceover, client.VoiceoverArgs{VoiceID: "v", Script: strings.Repeat("é", 1000)}, 0.15, 0.15, [2]int{1, 1}, ""},
		{"avatar short script", mediagen.FeatureVideoAvatar, client.AvatarArgs{VoiceID: "v", Script: strings.Repeat("a", 100)}, 0.5, 0.5, [2]int{1, 1}, ""},
		{"avatar length only known as a range", mediagen.FeatureVideoAvatar, client.AvatarArgs{VoiceID: "v", Script: strings.Repeat("a", 250), Resolution: client.Resolution1080p}, 0.75, 1.5, [2]int{1, 2},
			"video/avatar: 0.5 USD/15s × 1.5 (resolution=1080p) × 1–2 started 15 s = 0.75–1.5 USD"},
		{"voice clone", mediagen.FeatureVoiceClone, nil, 1, 1, [2]int{1, 1}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := p.Estimate(asArgs(t, tc.feature, tc.args))
			require.NoError(t, err)
			assert.InDelta(t, tc.min, e.Min, 1e-12)
			assert.InDelta(t, tc.max, e.Max, 1e-12)
			assert.Equal(t, tc.units, [2]int{e.MinUnits, e.MaxUnits})
			assert.Equal(t, tc.min == tc.max, e.Exact())
			if tc.text != "" {
				assert.Equal(t, tc.text, e.String())
			}
		})
	}

	_, err := p.Estimate(client.RawArgs{FeatureName: "video/unknown"})
	assert.ErrorIs(t, err, client.ErrInvalidArgument)
	_, err = p.Estimate(client.RawArgs{FeatureName: mediagen.FeatureVideoObjectReveal})
	assert.ErrorIs(t, err, client.ErrInvalidArgument, "not on this plan")
	_, err = p.Estimate(client.RawArgs{FeatureName: mediagen.FeatureVideoLogoReveal, Values: map[string]any{"resolution": "4k"}})
	assert.ErrorIs(t, err, client.ErrInvalidArgument)
	_, err = p.Estimate(client.RawArgs{FeatureName: mediagen.FeatureVideoLogoReveal, Values: map[string]any{"duration": 2.5}})
	assert.ErrorIs(t, err, client.ErrInvalidArgument)
	_, err = p.Estimate(client.RawArgs{FeatureName: mediagen.FeatureVideoLogoReveal, Values: map[string]any{"generateAudio": "yes"}})
	assert.ErrorIs(t, err, client.ErrInvalidArgument, "a priced boolean given as a string")
	_, err = p.Estimate(client.RawArgs{Values: map[string]any{"prompt": "p"}})
	assert.ErrorIs(t, err, client.ErrInvalidArgument, "no feature")
	_, err = p.Estimate(nil)
	assert.ErrorIs(t, err, client.ErrInvalidArgument)
}

// TestEstimateMatchesCharges makes many random valid calls of every feature
// and variant against the reference server and checks the estimate against
// what it charged.
func TestEstimateMatchesCharges(t *testing.T) {
	const calls = 300
	srv, c, ctx := setup(t)
	srv.SetBalance(100_000)
	prices, err := c.Pricing(ctx)
	require.NoError(t, err)
	for _, f := range client.Features() {
		require.Contains(t, prices, f)
	}
	img := uploadPNG(t, ctx, c)
	voice := catalogVoice(t, ctx, c)
	rng := rand.New(rand.NewPCG(1, 2))

	pick := func(values ...string) string { return values[rng.IntN(len(values))] }
	maybe := func(m map[string]any, name string, v any) {
		if rng.IntN(3) > 0 {
			m[name] = v
		}
	}
	script := func(maxLen int) string {
		n := 1 + rng.IntN(maxLen)
		if rng.IntN(4) == 0 {
			return strings.Repeat("ü", n) // multi-byte: billed by characters
		}
		return strings.Repeat("a", n)
	}
	argsFor := func(feature mediagen.Feature) map[string]any {
		m := map[string]any{}
		switch feature {
		case mediagen.FeatureAudioVoiceover:
			m["voiceId"], m["script"] = pick(voice.ID, voice.Slug), script(20_000)
			maybe(m, "prompt", "warm and slow")
			return m
		case mediagen.FeatureVideoAvatar:
			m["voiceId"], m["script"], m["permissionConfirmed"] = voice.ID, script(5_000), true
			maybe(m, "resolution", pick("720p", "1080p"))
			maybe(m, "aspectRatio", pick("1:1", "16:9", "9:16", "4:3", "3:4"))
			maybe(m, "prompt", "smiling")
			return m
		}
		m["prompt"] = fmt.Sprintf("prompt %d", rng.IntN(1000))
		m["image"] = img
		switch feature {
		case mediagen.FeatureVideoLogoReveal:
			maybe(m, "mode", pick("intro", "outro"))
			maybe(m, "aspectRatio", pick("16:9", "9:16"))
			maybe(m, "generateAudio", rng.IntN(2) == 0)
			maybe(m, "duration", 3+rng.IntN(8))
			maybe(m, "resolution", pick("720p", "1080p"))
			maybe(m, "background", "#101820")
		case mediagen.FeatureVideoObjectReveal:
			maybe(m, "duration", 3+rng.IntN(8))
			maybe(m, "resolution", pick("720p", "1080p"))
		case mediagen.FeatureImageSelfPortrait:
			m["permissionConfirmed"] = true
		default:
			maybe(m, "fineDetails", rng.IntN(2) == 0)
		}
		if feature != mediagen.FeatureVideoLogoReveal {
			maybe(m, "aspectRatio", pick("1:1", "16:9", "9:16", "4:3", "3:4"))
		}
		return m
	}

	covered := map[string]bool{}
	before := srv.Balance()
	var charged float64
	for range calls {
		feature := client.Features()[rng.IntN(len(client.Features()))]
		args := argsFor(feature)
		spelled := feature
		if rng.IntN(2) == 0 {
			spelled = client.LegacyFeature(feature)
		}
		e, err := prices.Estimate(asArgs(t, spelled, args))
		require.NoError(t, err)
		g, err := c.CreateGeneration(ctx, asArgs(t, spelled, args))
		require.NoError(t, err, "%s %v", spelled, args)
		if e.Exact() {
			require.InDelta(t, e.Min, g.BalanceUsed, 1e-9, "%s %v: %s", spelled, args, e)
		} else {
			require.GreaterOrEqual(t, g.BalanceUsed, e.Min-1e-9, "%s: %s", spelled, e)
			require.LessOrEqual(t, g.BalanceUsed, e.Max+1e-9, "%s: %s", spelled, e)
		}
		charged += g.BalanceUsed
		covered[string(feature)] = true
		for _, m := range e.Multipliers {
			covered[string(feature)+" "+m.Argument+"="+m.Value] = true
		}
	}
	assert.InDelta(t, charged, before-srv.Balance(), 1e-6, "the balance moved by exactly the charges")
	for _, f := range client.Features() {
		assert.True(t, covered[string(f)], f)
	}
	for _, v := range []string{
		"image/generation fineDetails=on", "image/generation fineDetails=off",
		"video/logo-reveal resolution=1080p", "video/logo-reveal resolution=720p",
		string(mediagen.FeatureVideoObjectReveal) + " resolution=1080p", "video/avatar resolution=1080p", "video/avatar resolution=720p",
	} {
		assert.True(t, covered[v], v)
	}
}

// TestEstimateEntryWithoutUnit: the interface document states each feature's
// unit in prose, so an entry that leaves "unit" out is billed per that unit,
// not per call. "amount" stands in for "price" as everywhere.
func TestEstimateEntryWithoutUnit(t *testing.T) {
	var p client.Pricing
	require.NoError(t, json.Unmarshal([]byte(`{
		"video/logo-reveal": {"price": 0.10},
		"video/avatar": {"amount": 0.50},
		"audio/voiceover": {"price": 0.15},
		"image/ad": {"amount": 0.08}
	}`), &p))
	for _, tc := range []struct {
		feature  mediagen.Feature
		args     any
		unit     mediagen.PricingUnit
		min, max float64
	}{
		{"logo-reveal", client.LogoRevealArgs{Image: "f", Prompt: "p", Duration: 8}, mediagen.PricingUnitSecond, 0.8, 0.8},
		{mediagen.FeatureVideoAvatar, client.AvatarArgs{VoiceID: "v", Script: strings.Repeat("a", 250)}, mediagen.PricingUnitPer15Seconds, 0.5, 1},
		{mediagen.FeatureAudioVoiceover, client.VoiceoverArgs{VoiceID: "v", Script: strings.Repeat("a", 1001)}, mediagen.PricingUnitPer1000Chars, 0.3, 0.3},
		{mediagen.FeatureImageAd, client.AdArgs{Image: "f", Prompt: "p"}, mediagen.PricingUnitCall, 0.08, 0.08},
	} {
		t.Run(string(tc.feature), func(t *testing.T) {
			e, err := p.Estimate(asArgs(t, tc.feature, tc.args))
			require.NoError(t, err)
			assert.Equal(t, tc.unit, e.Unit)
			assert.InDelta(t, tc.min, e.Min, 1e-12)
			assert.InDelta(t, tc.max, e.Max, 1e-12)
		})
	}
}

func TestEstimateNilArguments(t *testing.T) {
	p := testPricing(t)
	e, err := p.Estimate(client.RawArgs{FeatureName: mediagen.FeatureVoiceClone})
	require.NoError(t, err, "a nil map is no arguments")
	assert.InDelta(t, 1.0, e.Min, 1e-12)
	require.NotPanics(t, func() {
		_, err = p.Estimate((*client.ImageGenerationArgs)(nil))
	})
	assert.ErrorIs(t, err, client.ErrInvalidArgument)
}

// A duration too large for the count of seconds is the argument's fault,
// not a broken price list.
func TestEstimateHugeDuration(t *testing.T) {
	for _, d := range []float64{1e300, 9223372036854775808} {
		_, err := testPricing(t).Estimate(client.RawArgs{FeatureName: mediagen.FeatureVideoLogoReveal, Values: map[string]any{"duration": d}})
		require.ErrorIs(t, err, client.ErrInvalidArgument, "%v", d)
	}
}

// A negative price or multiplier is refused even when no unit is billed,
// where the cost alone would read -0.
func TestEstimateRefusesNegativePrices(t *testing.T) {
	for _, list := range []string{
		`{"video/logo-reveal": {"price": -1, "unit": "second"}}`,
		`{"video/logo-reveal": {"price": 1, "unit": "second", "variants": {"resolution": {"720p": -1}}}}`,
	} {
		var p client.Pricing
		require.NoError(t, json.Unmarshal([]byte(list), &p))
		_, err := p.Estimate(client.RawArgs{FeatureName: mediagen.FeatureVideoLogoReveal, Values: map[string]any{"duration": 0}})
		require.ErrorContains(t, err, "not a price", list)
		require.NotErrorIs(t, err, client.ErrInvalidArgument)
	}
}

// A call the service would refuse has no price: Estimate refuses it with
// the message CreateGeneration gives, before any request.
func TestEstimateRefusesWhatTheServiceRefuses(t *testing.T) {
	srv, c, ctx := setup(t)
	p := testPricing(t)
	for name, args := range map[string]client.Args{
		"out of bounds": client.RawArgs{FeatureName: mediagen.FeatureVideoLogoReveal, Values: map[string]any{"image": "file_1", "prompt": "sparks", "duration": 60}},
		"unknown":       client.RawArgs{FeatureName: mediagen.FeatureImageGeneration, Values: map[string]any{"prompt": "a kite", "colour": "red"}},
	} {
		_, err := p.Estimate(args)
		require.ErrorIs(t, err, client.ErrInvalidArgument, name)
		_, cerr := c.CreateGeneration(ctx, args)
		require.ErrorIs(t, cerr, client.ErrInvalidArgument, name)
		assert.Equal(t, cerr.Error(), err.Error(), name)
	}
	assert.Equal(t, clienttest.Balance, srv.Balance(), "nothing charged")

	// A price may be asked before the arguments it does not depend on are
	// known.
	e, err := p.Estimate(client.RawArgs{FeatureName: mediagen.FeatureVideoLogoReveal, Values: map[string]any{"duration": 8}})
	require.NoError(t, err)
	assert.InDelta(t, 8, e.MinUnits, 1e-12)
	e, err = p.Estimate(client.LogoRevealArgs{Prompt: "sparks", Duration: 8}) // the image not uploaded yet
	require.NoError(t, err)
	assert.InDelta(t, 8, e.MinUnits, 1e-12)
}
