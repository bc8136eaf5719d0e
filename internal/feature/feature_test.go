package feature_test

import (
	"encoding/json"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/feature"
	"github.com/mediagen/mediagen-go/openapi"
)

// The table and the contract's Feature enum and x-legacy-spellings must agree.
func TestTableMatchesTheContract(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas struct {
				Feature struct {
					Enum   []string          `json:"enum"`
					Legacy map[string]string `json:"x-legacy-spellings"`
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal(openapi.Spec(), &doc))
	spec := doc.Components.Schemas.Feature
	require.Len(t, spec.Enum, 2*len(feature.All))
	for _, f := range feature.All {
		assert.Contains(t, spec.Enum, f.Name)
		assert.Equal(t, f.Legacy, spec.Legacy[f.Name], f.Name)
		assert.Equal(t, f.Kind, f.Name[:len(f.Kind)], "kind is the canonical prefix")
	}
}

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		in, canonical, kind string
		legacy              bool
	}{
		{"video/logo-reveal", "video/logo-reveal", "video", false},
		{"logo-reveal", "video/logo-reveal", "video", true},
		{"image-generation", "image/generation", "image", true},
		{"audio/voiceover", "audio/voiceover", "audio", false},
		{"Logo-Reveal", "", "", false},
		{"", "", "", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			assert.Equal(t, tc.canonical, feature.Canonical(tc.in))
			assert.Equal(t, tc.legacy, feature.IsLegacy(tc.in))
			if tc.canonical != "" {
				assert.Equal(t, tc.kind, feature.KindOf(tc.in))
			}
		})
	}
	assert.Equal(t, "text", feature.KindOf("text/summary"), "an unknown canonical name still names its kind")
	_, ok := feature.Lookup(feature.VoiceClone)
	assert.False(t, ok, "voice cloning is priced but is not a generation feature")
}

func TestAsInt(t *testing.T) {
	for v, want := range map[any]bool{5.0: true, 5.5: false, "5": false, true: false, 3: true, 1e12: false} {
		_, ok := feature.AsInt(v)
		assert.Equal(t, want, ok, v)
	}
}

// The bounds DESIGN.md states, as the contract carries them.
func TestBoundsOfTheDesign(t *testing.T) {
	bound := func(f, arg string) feature.Arg {
		info, ok := feature.Lookup(f)
		require.True(t, ok, f)
		a, ok := info.Arg(arg)
		require.True(t, ok, "%s %s", f, arg)
		return a
	}
	assert.Equal(t, 10000, bound("image/generation", "prompt").MaxLength)
	assert.Equal(t, 5000, bound("video/avatar", "script").MaxLength)
	assert.Equal(t, 20000, bound("audio/voiceover", "script").MaxLength)
	for _, f := range []string{"video/logo-reveal", "logo-reveal"} {
		d := bound(f, "duration")
		assert.Equal(t, []any{3, 10, 5}, []any{d.Minimum, d.Maximum, d.Default})
	}
	assert.Equal(t, "16:9", bound("image/youtube-thumbnail", "aspectRatio").Default)
	assert.Equal(t, map[string]string{"false": "off", "true": "on"}, bound("image/ad", "fineDetails").Variant)
	assert.Equal(t, "720p", bound("video/avatar", "resolution").Default)
}

// Of several unknown arguments, the first by name is reported, whatever the
// map's order, with the feature's arguments sorted.
func TestCheckNamesTheFirstUnknownArgument(t *testing.T) {
	args := map[string]any{"script": "hi", "voiceId": "v", "zeta": 1, "alpha": 2, "mid": 3}
	for range 20 {
		err := feature.Check("audio/voiceover", args)
		require.Error(t, err)
		assert.Equal(t, "args.alpha is not an argument of audio/voiceover (arguments: prompt, script, voiceId)", err.Error())
	}
	require.NoError(t, feature.Check("voiceover", map[string]any{"script": "hi", "voiceId": "v"}))
}

// TestVisibleASCIIAsTables: Visible's ASCII shortcut agrees with the
// Unicode tables it reads for every other character.
func TestVisibleASCIIAsTables(t *testing.T) {
	for r := rune(0); r < 0x3000; r++ {
		want := !unicode.IsControl(r) && !unicode.IsSpace(r) &&
			!unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
		assert.Equal(t, want, feature.Visible(string(r)), "%U", r)
		assert.Equal(t, want, feature.Visible(" \t"+string(r)), "%U after spaces", r)
	}
}
