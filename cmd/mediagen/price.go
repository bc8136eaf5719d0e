package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

// priceCommand is `mediagen price [FEATURE]`.
func (a *app) priceCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "price [FEATURE]",
		Short: "Show the prices of your plan, or of one feature",
		Long: `Shows the price list of your plan: the base price of each feature, its unit,
and the arguments that change it (variants, as multipliers). With FEATURE
(either spelling, such as video/logo-reveal or logo-reveal; audio/voice-clone
for voice clones) only that one. 'mediagen estimate' prices one call.`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			var only mediagen.Feature
			if len(args) == 1 {
				only = mediagen.Feature(args[0])
				if only != mediagen.FeatureVoiceClone {
					f, err := feature(args[0])
					if err != nil {
						return err
					}
					only = client.CanonicalFeature(f)
				}
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			prices, err := c.Pricing(cmd.Context())
			if err != nil {
				return err
			}
			features := slices.Sorted(maps.Keys(prices))
			if only != "" {
				if _, ok := prices[only]; !ok {
					return &exitError{code: exitNotFound, err: fmt.Errorf("%s has no price on this plan", only)}
				}
				features = []mediagen.Feature{only}
			}
			if a.json {
				if only != "" {
					return a.writeJSON(priceJSON{Feature: only, PricingEntry: prices[only]})
				}
				return a.writeJSON(prices)
			}
			t := newTable(a.stdout, "FEATURE", "PRICE", "PER", "VARIANTS")
			for _, f := range features {
				e := prices[f]
				t.row(string(f), usd(e.Price), unitName(e.Unit), variants(e.Variants))
			}
			return t.flush()
		}),
	}
}

// priceJSON is one feature's price in --json output.
type priceJSON struct {
	Feature mediagen.Feature `json:"feature"`
	mediagen.PricingEntry
}

// unitName says what a price is charged per, for people.
func unitName(u mediagen.PricingUnit) string {
	switch u {
	case mediagen.PricingUnitCall, "":
		return "call"
	case mediagen.PricingUnitSecond:
		return "second of clip"
	case mediagen.PricingUnitPer15Seconds:
		return "started 15 s of clip"
	case mediagen.PricingUnitPer1000Chars:
		return "started 1,000 characters"
	}
	return string(u)
}

// variants lists the price multipliers of arguments, such as
// "resolution: 720p ×1, 1080p ×1.5".
func variants(v map[string]map[string]float64) string {
	var parts []string
	for _, arg := range slices.Sorted(maps.Keys(v)) {
		var vals []string
		for _, val := range slices.Sorted(maps.Keys(v[arg])) {
			vals = append(vals, val+" ×"+strconv.FormatFloat(v[arg][val], 'f', -1, 64))
		}
		parts = append(parts, arg+": "+strings.Join(vals, ", "))
	}
	return strings.Join(parts, "; ")
}

// estimateCommand is `mediagen estimate FEATURE --arg NAME=VALUE ...`.
func (a *app) estimateCommand() *cobra.Command {
	var rawArgs []string
	cmd := &cobra.Command{
		Use:   "estimate FEATURE [--arg NAME=VALUE]...",
		Short: "Show what one call would cost, with its working",
		Long: `Prices one generation with the arguments it would be given, on your plan's
price list, without submitting anything: the base price, times each priced
argument's multiplier (its default when left out), times the units billed.
File arguments do not change prices and can be left out.

  mediagen estimate video/logo-reveal --arg duration=8 --arg resolution=1080p
  mediagen estimate audio/voiceover --arg script="$(cat script.txt)"`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			var f mediagen.Feature = mediagen.FeatureVoiceClone
			if args[0] != string(mediagen.FeatureVoiceClone) {
				var err error
				if f, err = feature(args[0]); err != nil {
					return err
				}
			}
			values, err := parseArgs(rawArgs)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			prices, err := c.Pricing(cmd.Context())
			if err != nil {
				return err
			}
			e, err := prices.Estimate(client.RawArgs{FeatureName: f, Values: values})
			if err != nil {
				return err
			}
			if a.json {
				return a.writeJSON(estimateJSON(e))
			}
			a.printf("%s\n", printable(e.String()))
			return nil
		}),
	}
	cmd.Flags().StringArrayVar(&rawArgs, "arg", nil, "an argument as NAME=VALUE (repeatable); VALUE is JSON when it parses as JSON (8, true), else a string")
	return cmd
}

// estimateOut is an estimate in --json output.
type estimateOut struct {
	Feature     mediagen.Feature     `json:"feature"`
	Price       float64              `json:"price"`
	Unit        mediagen.PricingUnit `json:"unit"`
	Multipliers []multiplierOut      `json:"multipliers"`
	MinUnits    int                  `json:"minUnits"`
	MaxUnits    int                  `json:"maxUnits"`
	Min         float64              `json:"min"`
	Max         float64              `json:"max"`
	Working     string               `json:"working"`
}

type multiplierOut struct {
	Argument string  `json:"argument"`
	Value    string  `json:"value"`
	Factor   float64 `json:"factor"`
	Default  bool    `json:"default"`
}

func estimateJSON(e client.Estimate) estimateOut {
	out := estimateOut{Feature: e.Feature, Price: e.Price, Unit: e.Unit, MinUnits: e.MinUnits, MaxUnits: e.MaxUnits,
		Min: e.Min, Max: e.Max, Working: e.String(), Multipliers: []multiplierOut{}}
	for _, m := range e.Multipliers {
		out.Multipliers = append(out.Multipliers, multiplierOut(m))
	}
	return out
}
