package mediagen_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/openapi"
)

type schema struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
	Enum       []string                   `json:"enum"`
}

func schemas(t *testing.T) map[string]schema {
	t.Helper()
	var spec struct {
		Components struct {
			Schemas map[string]schema `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(openapi.Spec(), &spec))
	return spec.Components.Schemas
}

// The public models, each under its contract schema's name.
var models = map[string]any{
	"Generation": mediagen.Generation{}, "Output": mediagen.Output{}, "File": mediagen.File{},
	"Voice": mediagen.Voice{}, "Template": mediagen.Template{}, "TemplatePreviewRef": mediagen.TemplatePreviewRef{},
	"TemplatePreview": mediagen.TemplatePreview{}, "PricingEntry": mediagen.PricingEntry{},
	"UploadURL": mediagen.UploadURL{}, "UploadHeaders": mediagen.UploadHeaders{},
}

// Every model has exactly its schema's properties, and a required property
// is always sent.
func TestModelsMatchTheContract(t *testing.T) {
	all := schemas(t)
	for name, v := range models {
		t.Run(name, func(t *testing.T) {
			s, ok := all[name]
			require.True(t, ok, "no schema %s", name)
			typ := reflect.TypeOf(v)
			fields := map[string]bool{}
			for i := range typ.NumField() {
				tag, opts, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
				require.NotEmpty(t, tag, "%s.%s has no JSON name", name, typ.Field(i).Name)
				fields[tag] = true
				if slices.Contains(s.Required, tag) {
					assert.NotContains(t, opts, "omit", "%s.%s is required: always sent", name, tag)
				}
			}
			for prop := range s.Properties {
				assert.True(t, fields[prop], "contract property %s.%s has no field", name, prop)
			}
			for f := range fields {
				assert.Contains(t, s.Properties, f, "field %s.%s is not in the contract", name, f)
			}
		})
	}
}

// Every enum value of the contract is a constant of the model's type.
func TestEnumsMatchTheContract(t *testing.T) {
	all := schemas(t)
	valid := map[string]func(string) bool{
		"Feature":          func(s string) bool { return mediagen.Feature(s).Valid() },
		"Kind":             func(s string) bool { return mediagen.Kind(s).Valid() },
		"GenerationStatus": func(s string) bool { return mediagen.GenerationStatus(s).Valid() },
		"VoiceOwner":       func(s string) bool { return mediagen.VoiceOwner(s).Valid() },
		"VoiceStatus":      func(s string) bool { return mediagen.VoiceStatus(s).Valid() },
		"PricingUnit":      func(s string) bool { return mediagen.PricingUnit(s).Valid() },
	}
	for name, ok := range valid {
		require.NotEmpty(t, all[name].Enum, name)
		for _, v := range all[name].Enum {
			assert.True(t, ok(v), "%s %q", name, v)
		}
		assert.False(t, ok("not-a-value"), name)
	}
}

// A generation as the service sends it decodes and encodes back to the same
// JSON: no field is lost or renamed on the way through the model.
func TestGenerationRoundTrip(t *testing.T) {
	body := `{"id":"gen_1","projectId":"prj_1","feature":"logo-reveal","kind":"video","status":"done",
		"title":"Launch","params":{"image":"file_1","prompt":"sparks","duration":5},
		"output":{"video":"https://s/v.mp4","mime":"video/mp4","poster":"https://s/p.png","durationMs":5000,"width":1280,"height":720},
		"balanceUsed":0.75,"requestDate":"2026-11-22T10:00:00Z","responseDate":"2026-11-22T10:01:00Z",
		"expiresAt":"2026-11-23T10:00:00Z"}`
	var g mediagen.Generation
	require.NoError(t, json.Unmarshal([]byte(body), &g))
	assert.Equal(t, mediagen.FeatureLegacyLogoReveal, g.Feature)
	assert.Equal(t, "video/mp4", g.Output.MIME)
	assert.Equal(t, 1280, g.Output.Width)
	assert.Equal(t, time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), g.ExpiresAt)
	assert.Equal(t, map[string]any{"image": "file_1", "prompt": "sparks", "duration": 5.0}, g.Params)
	out, err := json.Marshal(g)
	require.NoError(t, err)
	assert.JSONEq(t, body, string(out))

	pending := `{"id":"gen_2","projectId":"prj_1","feature":"image/generation","kind":"image","status":"pending",
		"params":{},"balanceUsed":0.04,"requestDate":"2026-11-22T10:00:00Z"}`
	var p mediagen.Generation
	require.NoError(t, json.Unmarshal([]byte(pending), &p))
	out, err = json.Marshal(p)
	require.NoError(t, err)
	assert.JSONEq(t, pending, string(out), "absent optional fields stay absent")
}
