package client

import (
	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/feature"
)

// Features returns every feature's canonical spelling ([mediagen.FeatureImageSelfPortrait] and its
// siblings), in the contract's order. The service also accepts [LegacyFeature] spellings.
func Features() []mediagen.Feature {
	out := make([]mediagen.Feature, len(feature.All))
	for i, f := range feature.All {
		out[i] = mediagen.Feature(f.Name)
	}
	return out
}

// KindOf returns the kind of asset a feature in either spelling produces; "" when f is not a feature.
func KindOf(f mediagen.Feature) mediagen.Kind {
	info, _ := feature.Lookup(string(f)) // zero when f is not a feature
	return mediagen.Kind(info.Kind)
}

// CanonicalFeature returns the canonical spelling of a feature in either spelling ("logo-reveal" gives
// "video/logo-reveal"), matched exactly as on the service; "" when f is not a feature.
func CanonicalFeature(f mediagen.Feature) mediagen.Feature {
	return mediagen.Feature(feature.Canonical(string(f)))
}

// LegacyFeature returns the older flat spelling of a feature in either spelling ("video/logo-reveal"
// gives "logo-reveal"); "" when f is not a feature.
func LegacyFeature(f mediagen.Feature) mediagen.Feature {
	info, _ := feature.Lookup(string(f))
	return mediagen.Feature(info.Legacy)
}
