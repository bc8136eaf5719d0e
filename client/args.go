package client

import (
	"encoding/json"

	"github.com/mediagen/mediagen-go"
)

// Args are the arguments of one generation, and know their feature: one of
// the typed structs below (such as [LogoRevealArgs]), or [RawArgs] for a
// feature or an argument this version of the SDK does not type, and for the
// legacy flat spellings. Pass them to [Client.CreateGeneration] and
// [Pricing.Estimate].
type Args interface {
	// Feature returns the feature the arguments are for, in either spelling.
	Feature() mediagen.Feature
}

// RawArgs are free-form arguments: FeatureName (canonical or legacy
// spelling) and the JSON object sent as args. A legacy spelling is sent,
// and echoed back, as given.
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

// AspectRatio is the aspect ratio of an image or video. Logo reveals accept
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

// A zero field in the argument types below is not sent, and the service
// applies its default; every boolean defaults to false. File arguments
// (Image) are file ids from the upload endpoints, never URLs.

// SelfPortraitArgs are the arguments of [FeatureSelfPortrait]. Without
// PermissionConfirmed the service answers 403 ([ErrPermissionRequired]).
type SelfPortraitArgs struct {
	Image               string      `json:"image"`  // portrait of the person, required
	Prompt              string      `json:"prompt"` // required
	AspectRatio         AspectRatio `json:"aspectRatio,omitempty"`
	PermissionConfirmed bool        `json:"permissionConfirmed,omitempty"` // the caller may produce this likeness
}

// Feature returns [FeatureSelfPortrait].
func (SelfPortraitArgs) Feature() mediagen.Feature { return mediagen.FeatureImageSelfPortrait }

// ImageGenerationArgs are the arguments of [FeatureImageGeneration].
type ImageGenerationArgs struct {
	Prompt      string      `json:"prompt"` // required
	AspectRatio AspectRatio `json:"aspectRatio,omitempty"`
	FineDetails bool        `json:"fineDetails,omitempty"` // priced as the fineDetails variant
	Image       string      `json:"image,omitempty"`       // optional reference image
}

// Feature returns [FeatureImageGeneration].
func (ImageGenerationArgs) Feature() mediagen.Feature { return mediagen.FeatureImageGeneration }

// ProductShotArgs are the arguments of [FeatureProductShot].
type ProductShotArgs struct {
	Image       string      `json:"image"`  // photo of the product, required
	Prompt      string      `json:"prompt"` // required
	AspectRatio AspectRatio `json:"aspectRatio,omitempty"`
	FineDetails bool        `json:"fineDetails,omitempty"` // priced as the fineDetails variant
}

// Feature returns [FeatureProductShot].
func (ProductShotArgs) Feature() mediagen.Feature { return mediagen.FeatureImageProductShot }

// YoutubeThumbnailArgs are the arguments of [FeatureYoutubeThumbnail].
// AspectRatio defaults to 16:9.
type YoutubeThumbnailArgs struct {
	Prompt      string      `json:"prompt"`          // required
	Image       string      `json:"image,omitempty"` // optional reference image
	AspectRatio AspectRatio `json:"aspectRatio,omitempty"`
	FineDetails bool        `json:"fineDetails,omitempty"` // priced as the fineDetails variant
}

// Feature returns [FeatureYoutubeThumbnail].
func (YoutubeThumbnailArgs) Feature() mediagen.Feature { return mediagen.FeatureImageYoutubeThumbnail }

// AdArgs are the arguments of [FeatureAd].
type AdArgs struct {
	Image       string      `json:"image"`  // photo of the product advertised, required
	Prompt      string      `json:"prompt"` // required
	AspectRatio AspectRatio `json:"aspectRatio,omitempty"`
	FineDetails bool        `json:"fineDetails,omitempty"` // priced as the fineDetails variant
}

// Feature returns [FeatureAd].
func (AdArgs) Feature() mediagen.Feature { return mediagen.FeatureImageAd }

// LogoRevealArgs are the arguments of [FeatureLogoReveal], billed per
// second of clip. Prompt directs the motion around the logo (effect, scene,
// mood), not the logo itself. Duration is 3 to 10 seconds, default 5; Mode
// defaults to intro and AspectRatio to 16:9 (only 16:9 and 9:16 are allowed).
type LogoRevealArgs struct {
	Image         string      `json:"image"`  // the logo, required
	Prompt        string      `json:"prompt"` // required
	Mode          RevealMode  `json:"mode,omitempty"`
	AspectRatio   AspectRatio `json:"aspectRatio,omitempty"`
	Background    string      `json:"background,omitempty"` // CSS hex colour such as "#101820"
	GenerateAudio bool        `json:"generateAudio,omitempty"`
	Duration      int         `json:"duration,omitempty"`   // seconds
	Resolution    Resolution  `json:"resolution,omitempty"` // priced as the resolution variant
}

// Feature returns [FeatureLogoReveal].
func (LogoRevealArgs) Feature() mediagen.Feature { return mediagen.FeatureVideoLogoReveal }

// ObjectRevealArgs are the arguments of [FeatureObjectReveal], billed per
// second of clip. Duration is 3 to 10 seconds, default 5.
type ObjectRevealArgs struct {
	Image       string      `json:"image"`  // photo of the object, required
	Prompt      string      `json:"prompt"` // required
	AspectRatio AspectRatio `json:"aspectRatio,omitempty"`
	Duration    int         `json:"duration,omitempty"`   // seconds
	Resolution  Resolution  `json:"resolution,omitempty"` // priced as the resolution variant
}

// Feature returns [FeatureObjectReveal].
func (ObjectRevealArgs) Feature() mediagen.Feature { return mediagen.FeatureVideoObjectReveal }

// AvatarArgs are the arguments of [FeatureAvatar]: a portrait speaking
// Script (1 to 5,000 characters) in the voice VoiceID. It is billed per
// started 15 seconds of the finished clip, about one second per 15
// characters, so its price is known only as a range beforehand. Without
// PermissionConfirmed the service answers 403 ([ErrPermissionRequired]).
type AvatarArgs struct {
	VoiceID             string      `json:"voiceId"`         // voice id, or a catalog voice's slug; required
	Script              string      `json:"script"`          // required
	Image               string      `json:"image,omitempty"` // optional portrait
	AspectRatio         AspectRatio `json:"aspectRatio,omitempty"`
	Resolution          Resolution  `json:"resolution,omitempty"` // priced as the resolution variant
	PermissionConfirmed bool        `json:"permissionConfirmed,omitempty"`
	Prompt              string      `json:"prompt,omitempty"` // optional delivery direction, such as a template's prompt
}

// Feature returns [FeatureAvatar].
func (AvatarArgs) Feature() mediagen.Feature { return mediagen.FeatureVideoAvatar }

// VoiceoverArgs are the arguments of [FeatureVoiceover]: Script (1 to
// 20,000 characters) spoken in the voice VoiceID, billed per started 1,000
// characters.
type VoiceoverArgs struct {
	VoiceID string `json:"voiceId"`          // voice id, or a catalog voice's slug; required
	Script  string `json:"script"`           // required
	Prompt  string `json:"prompt,omitempty"` // optional delivery direction, such as a template's prompt
}

// Feature returns [FeatureVoiceover].
func (VoiceoverArgs) Feature() mediagen.Feature { return mediagen.FeatureAudioVoiceover }
