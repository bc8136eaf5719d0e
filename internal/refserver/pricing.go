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

// Billing units of the price table.
const (
	unitCall      = "call"      // one charge per generation
	unitSecond    = "second"    // per second of finished clip
	unit15s       = "15s"       // per started 15 seconds of clip
	unit1000Chars = "1000chars" // per started 1,000 characters of script
)

// priceEntry is one row of the price table.
type priceEntry struct {
	price    float64
	unit     string
	variants map[string]map[string]float64 // argument -> value -> multiplier
}

var (
	fineDetailsVariant = map[string]map[string]float64{"fineDetails": {"off": 1, "on": 1.5}}
	resolutionVariant  = map[string]map[string]float64{"resolution": {"720p": 1, "1080p": 1.5}}
)

// prices is the one price table of the default plan, served by
// GET /v3/pricing and used for every charge.
var prices = map[string]priceEntry{
	"image/self-portrait":     {0.06, unitCall, nil},
	"image/generation":        {0.04, unitCall, fineDetailsVariant},
	"image/product-shot":      {0.05, unitCall, fineDetailsVariant},
	"image/youtube-thumbnail": {0.05, unitCall, fineDetailsVariant},
	"image/ad":                {0.08, unitCall, fineDetailsVariant},
	"video/logo-reveal":       {0.10, unitSecond, resolutionVariant},
	"video/object-reveal":     {0.12, unitSecond, resolutionVariant},
	"video/avatar":            {0.50, unit15s, resolutionVariant},
	"audio/voiceover":         {0.15, unit1000Chars, nil},
	feature.VoiceClone:        {1.00, unitCall, nil},
}

// variantDefaults are the values absent variant arguments count at.
var variantDefaults = map[string]any{
	"fineDetails":   false,
	"resolution":    "720p",
	"generateAudio": false,
}

// cost computes the charge of a call in balance units: price x the
// multiplier of each variant argument (in sorted order of argument name) x
// units, rounded to 1/10,000 USD. The client's estimate uses the same
// formula, so the two agree to the unit.
func cost(canonical string, args map[string]any) int64 {
	e, ok := prices[canonical]
	if !ok {
		return 0
	}
	x := e.price
	for _, name := range slices.Sorted(maps.Keys(e.variants)) {
		v, ok := args[name]
		if !ok {
			v = variantDefaults[name]
		}
		key, _ := v.(string)
		if b, isBool := v.(bool); isBool {
			key = "off"
			if b {
				key = "on"
			}
		}
		if m, ok := e.variants[name][key]; ok {
			x *= m
		}
	}
	x *= float64(billingUnits(e.unit, args))
	return toUnits(math.Round(x*1e4) / 1e4)
}

// billingUnits counts the units a call is billed for.
func billingUnits(unit string, args map[string]any) int {
	switch unit {
	case unitSecond:
		return intArg(args, "duration", defaultDuration)
	case unit15s:
		return ceilDiv(clipSeconds(stringArg(args, "script")), 15)
	case unit1000Chars:
		return ceilDiv(runeCount(stringArg(args, "script")), 1000)
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
	for name, e := range prices {
		entry := mediagen.PricingEntry{Price: e.price, Unit: mediagen.PricingUnit(e.unit)}
		if e.variants != nil {
			// A deep copy: the shared table must not be reachable from an answer.
			v := make(map[string]map[string]float64, len(e.variants))
			for arg, m := range e.variants {
				v[arg] = maps.Clone(m)
			}
			entry.Variants = v
		}
		t.Prices[name] = entry
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
