package client

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
)

// defaultPricing is the reference server's price list (GET /v3/pricing).
const defaultPricing = `{
	"audio/voice-clone": {"price": 1, "unit": "call"},
	"audio/voiceover": {"price": 0.15, "unit": "1000chars"},
	"image/ad": {"price": 0.08, "unit": "call", "variants": {"fineDetails": {"off": 1, "on": 1.5}}},
	"image/generation": {"price": 0.04, "unit": "call", "variants": {"fineDetails": {"off": 1, "on": 1.5}}},
	"image/product-shot": {"price": 0.05, "unit": "call", "variants": {"fineDetails": {"off": 1, "on": 1.5}}},
	"image/self-portrait": {"price": 0.06, "unit": "call"},
	"image/youtube-thumbnail": {"price": 0.05, "unit": "call", "variants": {"fineDetails": {"off": 1, "on": 1.5}}},
	"video/avatar": {"price": 0.5, "unit": "15s", "variants": {"resolution": {"720p": 1, "1080p": 1.5}}},
	"video/logo-reveal": {"price": 0.1, "unit": "second", "variants": {"resolution": {"720p": 1, "1080p": 1.5}}},
	"` + string(mediagen.FeatureVideoObjectReveal) + `": {"price": 0.12, "unit": "second", "variants": {"resolution": {"720p": 1, "1080p": 1.5}}}
}`

// FuzzEstimate prices arbitrary arguments of any feature, on the reference
// price list or on an arbitrary one (prices given as JSON, an empty list
// meaning the reference one). It must never panic, and an estimate it
// returns is a price: finite, not negative, Max at least Min, the units
// and factors it shows not negative either. On the reference list a refusal
// is the arguments' fault and says so (ErrInvalidArgument).
func FuzzEstimate(f *testing.F) {
	f.Add([]byte(nil), "video/logo-reveal", []byte(`{"duration":8,"resolution":"1080p"}`))
	f.Add([]byte(`{"video/avatar":{"price":-1,"unit":"15s"}}`), "avatar", []byte(`{"script":""}`))
	reference := Pricing{}
	require.NoError(f, json.Unmarshal([]byte(defaultPricing), &reference))
	f.Fuzz(func(t *testing.T, list []byte, feature string, args []byte) {
		p := reference
		if len(list) > 0 {
			p = Pricing{}
			if json.Unmarshal(list, &p) != nil {
				return
			}
		}
		var values map[string]any
		if json.Unmarshal(args, &values) != nil {
			return
		}
		e, err := p.Estimate(RawArgs{FeatureName: mediagen.Feature(feature), Values: values})
		if err != nil {
			if len(list) == 0 && CanonicalFeature(mediagen.Feature(feature)) != "" {
				require.ErrorIs(t, err, ErrInvalidArgument, "the reference list refused %q %s", feature, args)
			}
			return
		}
		for _, x := range []float64{e.Min, e.Max, e.Price} {
			require.False(t, math.IsNaN(x) || math.IsInf(x, 0), "%s", e)
			require.GreaterOrEqual(t, x, 0.0, "%s", e)
		}
		require.GreaterOrEqual(t, e.Max, e.Min, "%s", e)
		require.GreaterOrEqual(t, e.MinUnits, 0, "%s", e)
		require.GreaterOrEqual(t, e.MaxUnits, e.MinUnits, "%s", e)
		for _, m := range e.Multipliers {
			require.False(t, math.IsNaN(m.Factor) || math.IsInf(m.Factor, 0), "%s", e)
			require.GreaterOrEqual(t, m.Factor, 0.0, "%s", e)
		}
		require.NotPanics(t, func() { _ = e.String() })
	})
}
