package client

import "github.com/mediagen/mediagen-go/internal/feature"

// The features, in their canonical spelling. The service also accepts older
// flat spellings (see [LegacyFeature]) and echoes a feature as submitted.
const (
	FeatureSelfPortrait     = "image/self-portrait"
	FeatureImageGeneration  = "image/generation"
	FeatureProductShot      = "image/product-shot"
	FeatureYoutubeThumbnail = "image/youtube-thumbnail"
	FeatureAd               = "image/ad"
	FeatureLogoReveal       = "video/logo-reveal"
	FeatureObjectReveal     = "video/object-reveal"
	FeatureAvatar           = "video/avatar"
	FeatureVoiceover        = "audio/voiceover"
)

// FeatureVoiceClone is the pricing key of voice cloning. It is priced like a
// feature but is not one: clones are made with [Client.CloneVoice].
const FeatureVoiceClone = "audio/voice-clone"

// Features returns every feature's canonical spelling, in the order of the
// interface document.
func Features() []string {
	out := make([]string, len(feature.All))
	for i, f := range feature.All {
		out[i] = f.Name
	}
	return out
}

// KindOf returns the kind of asset a feature produces, for either spelling;
// "" when name is not a feature.
func KindOf(name string) Kind {
	if f, ok := feature.Lookup(name); ok {
		return Kind(f.Kind)
	}
	return ""
}

// CanonicalFeature returns the canonical spelling of a feature given in
// either spelling ("logo-reveal" gives "video/logo-reveal"); "" when name is
// not a feature. Matching is exact, as on the service.
func CanonicalFeature(name string) string {
	return feature.Canonical(name)
}

// LegacyFeature returns the older flat spelling of a feature given in either
// spelling ("video/logo-reveal" gives "logo-reveal"); "" when name is not a
// feature.
func LegacyFeature(name string) string {
	f, ok := feature.Lookup(name)
	if !ok {
		return ""
	}
	return f.Legacy
}
