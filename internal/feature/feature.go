// Package feature is the table of the service's features: canonical names
// (`<kind>/<name>`), the kind of asset each produces, and the older flat
// spellings the service still accepts. The client, the reference server and
// its catalog share it, so the three can never disagree on a name.
package feature

import "strings"

// Info describes one feature.
type Info struct {
	Name   string // canonical spelling, e.g. "video/logo-reveal"
	Kind   string // "image", "video", "audio" or "text"
	Legacy string // older flat spelling, e.g. "logo-reveal"
}

// All lists every feature in the interface document's order.
var All = []Info{
	{"image/self-portrait", "image", "self-portrait"},
	{"image/generation", "image", "image-generation"},
	{"image/product-shot", "image", "product-shot"},
	{"image/youtube-thumbnail", "image", "youtube-thumbnail"},
	{"image/ad", "image", "ad"},
	{"video/logo-reveal", "video", "logo-reveal"},
	{"video/object-reveal", "video", "object-reveal"},
	{"video/avatar", "video", "avatar-video"},
	{"audio/voiceover", "audio", "voiceover"},
}

// VoiceClone is the pricing key of voice cloning. It is priced like a
// feature but is not one: clones are made through POST /v3/voices.
const VoiceClone = "audio/voice-clone"

var byName = func() map[string]Info {
	m := make(map[string]Info, 2*len(All))
	for _, f := range All {
		m[f.Name] = f
		m[f.Legacy] = f
	}
	return m
}()

// Lookup resolves a canonical or legacy spelling. Matching is exact: the
// service does not fold case or trim spaces.
func Lookup(name string) (Info, bool) {
	f, ok := byName[name]
	return f, ok
}

// Canonical returns the canonical spelling of name, or "" when name is not a
// feature in either spelling.
func Canonical(name string) string {
	return byName[name].Name
}

// IsLegacy reports whether name is a feature's older flat spelling.
func IsLegacy(name string) bool {
	f, ok := byName[name]
	return ok && f.Legacy == name
}

// KindOf returns the kind of asset a feature produces, reading the prefix of
// a canonical name or looking up a legacy one; "" for unknown names.
func KindOf(name string) string {
	if f, ok := byName[name]; ok {
		return f.Kind
	}
	if kind, _, ok := strings.Cut(name, "/"); ok {
		return kind
	}
	return ""
}
