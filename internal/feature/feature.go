// Package feature is the table of the service's features, generated from
// the contract (openapi/openapi.json): names in both spellings, kind,
// billing unit, MCP tool and every argument's schema with its priced
// variants. The client and the reference server both read it.
package feature

//go:generate go run ../cmd/featuregen -in ../../openapi/openapi.json -table table.gen.go

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Info describes one feature.
type Info struct {
	Name            string // canonical spelling, e.g. "video/logo-reveal"
	Kind            string // "image", "video", "audio" or "text"
	Legacy          string // older flat spelling, e.g. "logo-reveal"
	Unit            string // what a price is per: "call", "second", "15s" or "1000chars"
	Tool            string // the MCP tool of the feature; "" when create_generation alone covers it
	ToolDescription string
	Args            []Arg // in the contract's order
}

// Arg is the schema of one argument.
type Arg struct {
	Name     string
	Type     string         // "string", "boolean" or "integer"
	Format   string         // "file-id", "voice-id", "hex-color" or "" (text, or an enum)
	Pattern  *regexp.Regexp // hex colours
	Required bool
	// Bounds: characters of text, the range of an integer.
	MinLength, MaxLength, Minimum, Maximum int
	Enum                                   []string
	Default                                any // the value counted when absent; nil when the contract gives none
	// Variant maps the argument's values (booleans as "true" and "false")
	// to the price list's variant keys; nil when the argument is not priced.
	Variant     map[string]string
	Description string
}

// Arg returns the argument name of the feature.
func (f Info) Arg(name string) (Arg, bool) {
	for _, a := range f.Args {
		if a.Name == name {
			return a, true
		}
	}
	return Arg{}, false
}

// Default returns argument name of args, or else the contract's default
// (nil when there is none): the value the service counts.
func (f Info) Default(args map[string]any, name string) any {
	if v, ok := args[name]; ok {
		return v
	}
	a, _ := f.Arg(name)
	return a.Default
}

// VariantKey returns the price list's key for value v of a priced argument:
// the contract's key for it, else "off"/"on" for a boolean and the value
// itself for a string or a number; ok is false when v is not a scalar.
func (a Arg) VariantKey(v any) (key string, ok bool) {
	switch x := v.(type) {
	case bool:
		key = strconv.FormatBool(x)
		if _, mapped := a.Variant[key]; !mapped {
			return map[bool]string{false: "off", true: "on"}[x], true
		}
	case string:
		key = x
	case float64:
		key = strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		key = strconv.Itoa(x)
	default:
		return "", false
	}
	if k, mapped := a.Variant[key]; mapped {
		return k, true
	}
	return key, true
}

// VoiceClone is the pricing key of voice cloning, which is not a feature:
// clones are made through POST /v3/voices.
const VoiceClone = "audio/voice-clone"

var byName = func() map[string]Info {
	m := make(map[string]Info, 2*len(All))
	for _, f := range All {
		m[f.Name] = f
		m[f.Legacy] = f
	}
	return m
}()

// argNames holds each feature's argument names, sorted, by canonical name.
var argNames = func() map[string][]string {
	m := make(map[string][]string, len(All))
	for _, f := range All {
		names := make([]string, len(f.Args))
		for i, a := range f.Args {
			names[i] = a.Name
		}
		slices.Sort(names)
		m[f.Name] = names
	}
	return m
}()

// Lookup resolves a canonical or legacy spelling, exactly as the service does.
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

// KindOf returns the kind of asset a feature produces; the prefix of an
// unknown canonical name; "" for other unknown names.
func KindOf(name string) string {
	if f, ok := byName[name]; ok {
		return f.Kind
	}
	if kind, _, ok := strings.Cut(name, "/"); ok {
		return kind
	}
	return ""
}

// Names returns the canonical names, in the interface document's order.
func Names() []string {
	out := make([]string, len(All))
	for i, f := range All {
		out[i] = f.Name
	}
	return out
}
