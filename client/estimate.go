package client

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/feature"
)

// Multiplier is one priced argument of an [Estimate]: the value the call
// selects and the factor it applies to the base price.
type Multiplier struct {
	Argument string  // argument name, e.g. "resolution"
	Value    string  // selected value; booleans read "off" or "on"
	Factor   float64 // multiplier on the price
	Default  bool    // the call leaves the argument out, so its default counts
}

// Estimate is the cost of one call, with its working: Price per Unit, times
// each multiplier, times the units billed, rounded to 1/10,000 USD as the
// service rounds. Min and Max bound a charge whose units are known only
// after rendering (an avatar clip's length); otherwise they are equal.
type Estimate struct {
	Feature     mediagen.Feature     // canonical spelling
	Price       float64              // base price per unit, USD
	Unit        mediagen.PricingUnit // what Price is charged per
	Multipliers []Multiplier         // in order of argument name
	MinUnits    int                  // units billed, at least
	MaxUnits    int                  // units billed, at most
	Min         float64              // cost at MinUnits, USD
	Max         float64              // cost at MaxUnits, USD
}

// Exact reports whether the cost is known before the call (Min == Max).
func (e Estimate) Exact() bool { return e.Min == e.Max }

// String prints the working, for example
// "video/logo-reveal: 0.1 USD/second × 1.5 (resolution=1080p) × 8 seconds = 1.2 USD".
func (e Estimate) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s USD/%s", e.Feature, decimal(e.Price), e.Unit)
	for _, m := range e.Multipliers {
		def := ""
		if m.Default {
			def = ", default"
		}
		fmt.Fprintf(&b, " × %s (%s=%s%s)", decimal(m.Factor), m.Argument, m.Value, def)
	}
	if e.Unit != mediagen.PricingUnitCall || e.MaxUnits != 1 {
		units := strconv.Itoa(e.MinUnits)
		if e.MaxUnits != e.MinUnits {
			units += "–" + strconv.Itoa(e.MaxUnits)
		}
		fmt.Fprintf(&b, " × %s %s", units, cmp.Or(unitNouns[e.Unit], "calls"))
	}
	fmt.Fprintf(&b, " = %s", decimal(e.Min))
	if !e.Exact() {
		b.WriteString("–" + decimal(e.Max))
	}
	b.WriteString(" USD")
	return b.String()
}

func decimal(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// unitNouns name the units billed in [Estimate.String]; others are calls.
var unitNouns = map[mediagen.PricingUnit]string{
	mediagen.PricingUnitSecond:       "seconds",
	mediagen.PricingUnitPer15Seconds: "started 15 s",
	mediagen.PricingUnitPer1000Chars: "started 1,000 chars",
}

// Avatar clips last about a second per 15 characters of script; as the real
// length is known only after rendering, an estimate allows this range.
const (
	avatarCharsPerSecond = 15
	avatarMinFactor      = 0.8
	avatarMaxFactor      = 1.5
)

// Estimate returns what a call with args (as for [Client.CreateGeneration])
// costs on this price list: the base price, times the multiplier each priced
// argument selects (an absent one at its default), times the units: 1 per
// call, the seconds (default 5) of a reveal, each started 15 s of avatar
// clip (a range), each started 1,000 characters of voiceover script.
// RawArgs{FeatureName: [mediagen.FeatureVoiceClone]} prices a voice clone.
// Arguments the service would refuse are refused with [ErrInvalidArgument];
// arguments left out are priced at their defaults.
func (p Pricing) Estimate(args Args) (Estimate, error) {
	a, err := encodeArgs(args)
	if err != nil {
		return Estimate{}, err
	}
	m := a.params()
	name := cmp.Or(CanonicalFeature(a.feature), a.feature)
	entry, ok := p[name]
	if !ok {
		return Estimate{}, fmt.Errorf("%w: no price for feature %q on this plan", ErrInvalidArgument, a.feature)
	}
	info, _ := feature.Lookup(string(name))
	unit := cmp.Or(entry.Unit, mediagen.PricingUnit(info.Unit), mediagen.PricingUnitCall)
	e := Estimate{Feature: name, Price: entry.Price, Unit: unit}
	if entry.Variants != nil {
		if e.Multipliers, err = multipliers(info, entry.Variants, m); err != nil {
			return Estimate{}, err
		}
	}
	// Before the units: a call billed for none would hide a negative price.
	if !validFactor(e.Price) {
		return Estimate{}, fmt.Errorf("mediagen: the price list gives %s a price of %v USD; not a price", name, e.Price)
	}
	for _, mult := range e.Multipliers {
		if !validFactor(mult.Factor) {
			return Estimate{}, fmt.Errorf("mediagen: the price list gives %s=%s a multiplier of %v; not a price", mult.Argument, mult.Value, mult.Factor)
		}
	}
	// After the price list's checks, so a broken list is told whatever the
	// arguments; arguments left out pass (a price may come before them).
	if name != mediagen.FeatureVoiceClone {
		if err := feature.CheckGiven(string(a.feature), m); err != nil {
			return Estimate{}, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
		}
	}
	if e.MinUnits, e.MaxUnits, err = units(e.Unit, info, m); err != nil {
		return Estimate{}, err
	}
	e.Min, e.Max = e.cost(e.MinUnits), e.cost(e.MaxUnits)
	if !(e.Min >= 0 && e.Max >= e.Min) || math.IsInf(e.Max, 0) {
		// NaN fails both comparisons: a broken price list, not a price.
		return Estimate{}, fmt.Errorf("mediagen: the price list gives %s a cost of %v to %v USD; not a price", name, e.Min, e.Max)
	}
	return e, nil
}

// validFactor reports whether a price or multiplier is finite, not negative.
func validFactor(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }

// maxDuration bounds the seconds an estimate counts: past it a float64 or
// an int no longer holds every whole number.
const maxDuration = min(1<<53, math.MaxInt)

// cost multiplies in the service's order, so float rounding agrees.
func (e Estimate) cost(units int) float64 {
	x := e.Price
	for _, m := range e.Multipliers {
		x *= m.Factor
	}
	x *= float64(units)
	return math.Round(x*1e4) / 1e4
}

// multipliers picks each priced argument's factor, by argument name; an
// absent argument counts at its default.
func multipliers(info feature.Info, variants map[string]map[string]float64, args map[string]any) ([]Multiplier, error) {
	out := make([]Multiplier, 0, len(variants))
	for _, name := range slices.Sorted(maps.Keys(variants)) {
		_, present := args[name]
		// Without a documented default the service applies no factor.
		m := Multiplier{Argument: name, Value: "default", Factor: 1, Default: !present}
		if v := info.Default(args, name); v != nil {
			a, _ := info.Arg(name)
			var ok bool
			if m.Value, ok = a.VariantKey(v); !ok {
				return nil, fmt.Errorf("%w: priced argument %s has a %T value", ErrInvalidArgument, name, v)
			}
			if m.Factor, ok = variants[name][m.Value]; !ok {
				priced := strings.Join(slices.Sorted(maps.Keys(variants[name])), ", ")
				return nil, fmt.Errorf("%w: %s=%s has no price (priced values: %s)", ErrInvalidArgument, name, m.Value, priced)
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// units counts the units a call is billed for: at least and at most.
func units(u mediagen.PricingUnit, info feature.Info, args map[string]any) (int, int, error) {
	switch u {
	case mediagen.PricingUnitSecond:
		d, _ := feature.AsInt(info.Default(nil, "duration"))
		if v, ok := args["duration"]; ok {
			f, isNum := v.(float64)
			if !isNum || f != math.Trunc(f) || f < 0 {
				return 0, 0, fmt.Errorf("%w: duration %v is not a whole number of seconds", ErrInvalidArgument, v)
			}
			if f > maxDuration {
				return 0, 0, fmt.Errorf("%w: duration %v is out of range", ErrInvalidArgument, v)
			}
			d = int(f)
		}
		return d, d, nil
	case mediagen.PricingUnitPer15Seconds:
		script, _ := args["script"].(string)
		clip := max(1, ceilDiv(utf8.RuneCountInString(script), avatarCharsPerSecond))
		lo := max(1, int(math.Floor(avatarMinFactor*float64(clip))))
		hi := int(math.Ceil(avatarMaxFactor * float64(clip)))
		return ceilDiv(lo, 15), ceilDiv(hi, 15), nil
	case mediagen.PricingUnitPer1000Chars:
		script, _ := args["script"].(string)
		n := ceilDiv(utf8.RuneCountInString(script), 1000)
		return n, n, nil
	case mediagen.PricingUnitCall, "":
		return 1, 1, nil
	default:
		return 0, 0, fmt.Errorf("mediagen: unknown pricing unit %q; this version of the client cannot estimate it", u)
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
