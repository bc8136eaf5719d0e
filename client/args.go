package client

//go:generate go run ../internal/cmd/featuregen -in ../openapi/openapi.json -args args.gen.go

import (
	"encoding/json"

	"github.com/mediagen/mediagen-go"
)

// Args are the arguments of one generation, for [Client.CreateGeneration]
// and [Pricing.Estimate]: a typed struct generated from the contract (such
// as [LogoRevealArgs]), or [RawArgs] for what this SDK does not type and for
// legacy spellings. A zero field of a typed struct is not sent, so the
// service applies its default (false for booleans). File arguments are file
// ids from the upload endpoints, never URLs.
type Args interface {
	Feature() mediagen.Feature // in either spelling
}

// RawArgs are free-form arguments: FeatureName (either spelling, sent and
// echoed as given) and the JSON object sent as args.
//
//	client.RawArgs{FeatureName: "logo-reveal", Values: map[string]any{"image": id, "prompt": "sparks"}}
type RawArgs struct {
	FeatureName mediagen.Feature
	Values      map[string]any
}

// Feature returns FeatureName.
func (a RawArgs) Feature() mediagen.Feature { return a.FeatureName }

// MarshalJSON encodes Values, so RawArgs and the typed structs encode alike.
func (a RawArgs) MarshalJSON() ([]byte, error) {
	if a.Values == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(a.Values)
}

// AspectRatio is the aspect ratio of an image or video; logo reveals take
// only [Aspect16x9] and [Aspect9x16].
type AspectRatio string

// The aspect ratios.
const (
	Aspect1x1  AspectRatio = "1:1"
	Aspect16x9 AspectRatio = "16:9"
	Aspect9x16 AspectRatio = "9:16"
	Aspect4x3  AspectRatio = "4:3"
	Aspect3x4  AspectRatio = "3:4"
)

// Resolution is the output resolution of a video; it changes the price.
type Resolution string

// The video resolutions; 720p is the default.
const (
	Resolution720p  Resolution = "720p"
	Resolution1080p Resolution = "1080p"
)

// RevealMode says whether a logo reveal builds the logo in or takes it apart.
type RevealMode string

// The logo reveal modes; intro is the default.
const (
	ModeIntro RevealMode = "intro" // builds the logo in
	ModeOutro RevealMode = "outro" // starts on the logo and takes it apart
)
