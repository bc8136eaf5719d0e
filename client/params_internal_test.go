package client

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/feature"
)

// The params of every typed args, made without decoding, equal what
// decoding its JSON gives, for zero and for set fields, by value and by
// pointer; a type embedding one goes through its JSON, which may say more.
func TestTypedParamsMatchTheirJSON(t *testing.T) {
	typed := []Args{SelfPortraitArgs{}, ImageGenerationArgs{}, ProductShotArgs{}, AdArgs{},
		YoutubeThumbnailArgs{}, LogoRevealArgs{}, ObjectRevealArgs{}, AvatarArgs{}, VoiceoverArgs{}}
	require.Len(t, typed, len(feature.All), "one typed args per feature")
	for _, zero := range typed {
		full := reflect.New(reflect.TypeOf(zero)).Elem()
		for i := range full.NumField() {
			switch f := full.Field(i); f.Kind() {
			case reflect.String:
				f.SetString("x" + full.Type().Field(i).Name)
			case reflect.Int:
				f.SetInt(int64(7 + i))
			case reflect.Bool:
				f.SetBool(true)
			default:
				t.Fatalf("%T.%s: a kind params does not write", zero, full.Type().Field(i).Name)
			}
		}
		ptr := reflect.New(full.Type())
		ptr.Elem().Set(full)
		for _, args := range []Args{zero, full.Interface().(Args), ptr.Interface().(Args)} {
			raw, err := json.Marshal(args)
			require.NoError(t, err)
			var want map[string]any
			require.NoError(t, json.Unmarshal(raw, &want))
			got, ok := typedParams(args)
			require.True(t, ok, "%T", args)
			assert.Equal(t, want, got, "%T %s", args, raw)
		}
	}

	type embedding struct {
		ImageGenerationArgs
		Extra string `json:"extra"`
	}
	_, ok := typedParams(embedding{ImageGenerationArgs{Prompt: "p"}, "e"})
	assert.False(t, ok)
	a, err := encodeArgs(embedding{ImageGenerationArgs{Prompt: "p"}, "e"})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"prompt": "p", "extra": "e"}, a.params())
}
