package client_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/openapi"
)

// featureArgs are the typed arguments, each named like its contract schema.
var featureArgs = []client.Args{
	client.SelfPortraitArgs{}, client.ImageGenerationArgs{}, client.ProductShotArgs{},
	client.YoutubeThumbnailArgs{}, client.AdArgs{}, client.LogoRevealArgs{},
	client.ObjectRevealArgs{}, client.AvatarArgs{}, client.VoiceoverArgs{},
}

// TestArgsMatchTheContract checks every field's JSON name against the
// contract schema of the same name, both ways, and that exactly the
// required properties are always sent.
func TestArgsMatchTheContract(t *testing.T) {
	var spec struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(openapi.Spec(), &spec))

	var features []mediagen.Feature
	for _, args := range featureArgs {
		typ := reflect.TypeOf(args)
		t.Run(typ.Name(), func(t *testing.T) {
			schema, ok := spec.Components.Schemas[typ.Name()]
			require.True(t, ok, "the contract has a schema %s", typ.Name())
			var names []string
			for i := range typ.NumField() {
				f := typ.Field(i)
				name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
				require.NotEmpty(t, name, f.Name)
				names = append(names, name)
				assert.Contains(t, schema.Properties, name, "field %s", f.Name)
				assert.Equal(t, slices.Contains(schema.Required, name), opts != "omitempty",
					"%s: required properties are always sent, optional ones only when set", name)
			}
			for prop := range schema.Properties {
				assert.Contains(t, names, prop, "contract property %s has a field", prop)
			}
		})
		features = append(features, args.Feature())
	}
	assert.ElementsMatch(t, client.Features(), features, "one typed args per feature")
}

func TestZeroFieldsAreNotSent(t *testing.T) {
	b, err := json.Marshal(client.LogoRevealArgs{Image: "file_1", Prompt: "p"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"image":"file_1","prompt":"p"}`, string(b))
	b, err = json.Marshal(client.AvatarArgs{VoiceID: "v", Script: "s", PermissionConfirmed: true, Resolution: client.Resolution1080p})
	require.NoError(t, err)
	assert.JSONEq(t, `{"voiceId":"v","script":"s","permissionConfirmed":true,"resolution":"1080p"}`, string(b))
}
