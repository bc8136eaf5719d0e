package refserver

import (
	"context"
	"maps"
	"math"
	"slices"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/feature"
)

// prices is the base price, in USD per billing unit, of each feature on the
// default plan, served by GET /v3/pricing and used for every charge. Units
// and priced arguments are the feature table's; voice cloning is per call.
var prices = map[string]float64{
	string(mediagen.FeatureImageSelfPortrait):     0.06,
	string(mediagen.FeatureImageGeneration):       0.04,
	string(mediagen.FeatureImageProductShot):      0.05,
	string(mediagen.FeatureImageYoutubeThumbnail): 0.05,
	string(mediagen.FeatureImageAd):               0.08,
	string(mediagen.FeatureVideoLogoReveal):       0.10,
	string(mediagen.FeatureVideoObjectReveal):     0.12,
	string(mediagen.FeatureVideoAvatar):           0.50,
	string(mediagen.FeatureAudioVoiceover):        0.15,
	feature.VoiceClone:                            1.00,
}

// multipliers are the default plan's factors by priced argument and variant
// key; a key not listed costs 1x, and an argument not listed (such as
// generateAudio) is not priced on this plan.
var multipliers = map[string]map[string]float64{
	"fineDetails": {"on": 1.5},
	"resolution":  {"1080p": 1.5},
}

// variants returns the price list's variants of a feature: for each priced
// argument the plan prices, every variant key with its multiplier; nil when
// none.
func variants(info feature.Info) map[string]map[string]float64 {
	var out map[string]map[string]float64
	for _, a := range info.Args {
		m, priced := multipliers[a.Name]
		if a.Variant == nil || !priced {
			continue
		}
		if out == nil {
			out = map[string]map[string]float64{}
		}
		out[a.Name] = map[string]float64{}
		for _, key := range a.Variant {
			out[a.Name][key] = 1
			if f, ok := m[key]; ok {
				out[a.Name][key] = f
			}
		}
	}
	return out
}

// unit is what a price is per: the feature table's unit, per call for a
// voice clone.
func unit(info feature.Info) string {
	if info.Unit == "" {
		return string(mediagen.PricingUnitCall)
	}
	return info.Unit
}

// cost computes the charge of a call in balance units: price x the
// multiplier of each variant argument (in sorted order of argument name) x
// units, rounded to 1/10,000 USD. The client's estimate uses the same
// formula, so the two agree to the unit.
func cost(canonical string, args map[string]any) int64 {
	price, ok := prices[canonical]
	if !ok {
		return 0
	}
	info, _ := feature.Lookup(canonical)
	x := price
	v := variants(info)
	for _, name := range slices.Sorted(maps.Keys(v)) {
		a, _ := info.Arg(name)
		key, _ := a.VariantKey(info.Default(args, name))
		if m, ok := v[name][key]; ok {
			x *= m
		}
	}
	x *= float64(billingUnits(info, args))
	return toUnits(math.Round(x*1e4) / 1e4)
}

// billingUnits counts the units a call is billed for.
func billingUnits(info feature.Info, args map[string]any) int {
	switch mediagen.PricingUnit(unit(info)) {
	case mediagen.PricingUnitSecond:
		return intArg(info, args, "duration")
	case mediagen.PricingUnitPer15Seconds:
		return ceilDiv(clipSeconds(stringArg(info, args, "script")), 15)
	case mediagen.PricingUnitPer1000Chars:
		return ceilDiv(runeCount(stringArg(info, args, "script")), 1000)
	default:
		return 1
	}
}

// clipSeconds is the length of an avatar clip: about one second per 15
// characters of script, at least one second.
func clipSeconds(script string) int {
	return max(1, ceilDiv(runeCount(script), 15))
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// pricingTable renders the price table as GET /v3/pricing answers it.
func pricingTable() api.PricingTable {
	t := api.PricingTable{Prices: make(map[string]mediagen.PricingEntry, len(prices))}
	for name, price := range prices {
		info, _ := feature.Lookup(name)
		// variants builds fresh maps: the shared table is never reachable from an answer.
		t.Prices[name] = mediagen.PricingEntry{Price: price, Unit: mediagen.PricingUnit(unit(info)), Variants: variants(info)}
	}
	return t
}

// GetPricing answers GET /v3/pricing: the default plan's price table.
func (s *Server) GetPricing(ctx context.Context, _ api.GetPricingRequestObject) (api.GetPricingResponseObject, error) {
	if _, err := caller(ctx); err != nil {
		return err, nil
	}
	return api.GetPricing200JSONResponse(pricingTable()), nil
}
