package client

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/feature"
)

// The check generated for each typed args, field by field, answers as
// feature.Check of its JSON does: for zero, valid, out-of-bounds and bad
// fields, by value and by pointer. A type embedding one is checked through
// its JSON, which may say more.
func TestTypedCheckMatchesCheck(t *testing.T) {
	typed := []Args{SelfPortraitArgs{}, ImageGenerationArgs{}, ProductShotArgs{}, AdArgs{},
		YoutubeThumbnailArgs{}, LogoRevealArgs{}, ObjectRevealArgs{}, AvatarArgs{}, VoiceoverArgs{}}
	require.Len(t, typed, len(feature.All), "one typed args per feature")
	strs := []string{"", "x", " ", "#101820", "16:9", "intro", "720p", string(make([]byte, 20001))}
	ints := []int64{0, 1, 6, 15, 61, -3, 1 << 40}
	checked := 0
	for _, zero := range typed {
		typ := reflect.TypeOf(zero)
		// Each case sets every field to its kind's k-th sample, then one
		// field at a time to each sample, so every field meets every sample.
		var cases []reflect.Value
		for k := range len(strs) {
			v := reflect.New(typ).Elem()
			for i := range v.NumField() {
				setSample(t, v.Field(i), strs, ints, k)
			}
			cases = append(cases, v)
			for i := range v.NumField() {
				for s := range len(strs) {
					w := reflect.New(typ).Elem()
					w.Set(v)
					setSample(t, w.Field(i), strs, ints, s)
					cases = append(cases, w)
				}
			}
		}
		for _, v := range cases {
			ptr := reflect.New(typ)
			ptr.Elem().Set(v)
			for _, args := range []Args{v.Interface().(Args), ptr.Interface().(Args)} {
				raw, err := json.Marshal(args)
				require.NoError(t, err)
				var m map[string]any
				require.NoError(t, json.Unmarshal(raw, &m))
				want := feature.Check(string(args.Feature()), m)
				ok, got := checkTyped(args)
				require.True(t, ok, "%T", args)
				assert.Equal(t, want, got, "%T %.200s", args, raw)
				if want != nil {
					checked++
				}
			}
		}
	}
	assert.Greater(t, checked, 1000, "the cases include refusals")

	type embedding struct {
		ImageGenerationArgs
		Extra string `json:"extra"`
	}
	ok, _ := checkTyped(embedding{ImageGenerationArgs{Prompt: "p"}, "e"})
	assert.False(t, ok)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	c, err := New("k", WithBaseURL(srv.URL))
	require.NoError(t, err)
	_, err = c.CreateGeneration(t.Context(), embedding{ImageGenerationArgs{Prompt: "p"}, "e"})
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.ErrorContains(t, err, "args.extra is not an argument of image/generation")
	assert.Zero(t, hits.Load(), "nothing sent")
}

// setSample sets field f to sample k of its kind.
func setSample(t *testing.T, f reflect.Value, strs []string, ints []int64, k int) {
	switch f.Kind() {
	case reflect.String:
		f.SetString(strs[k%len(strs)])
	case reflect.Int:
		f.SetInt(ints[k%len(ints)])
	case reflect.Bool:
		f.SetBool(k%2 == 1)
	default:
		t.Fatalf("%s: a kind the generated check does not read", f.Type())
	}
}

// TestTypedEncodeMatchesMarshal holds the generated encoding of typed args
// to json.Marshal's, byte for byte, over every field and a range of values
// (escapes, invalid UTF-8, zero and negative numbers), after other bytes,
// and leaves a type embedding one to json.Marshal.
func TestTypedEncodeMatchesMarshal(t *testing.T) {
	typed := []Args{SelfPortraitArgs{}, ImageGenerationArgs{}, ProductShotArgs{}, AdArgs{},
		YoutubeThumbnailArgs{}, LogoRevealArgs{}, ObjectRevealArgs{}, AvatarArgs{}, VoiceoverArgs{}}
	require.Len(t, typed, len(feature.All), "one typed args per feature")
	strs := []string{"", "x", `a "b" \ c`, "<&>", "\x00\x1f\u2028\u2029", "é\xff", "16:9"}
	ints := []int64{0, 1, -3, 1 << 40}
	for _, zero := range typed {
		typ := reflect.TypeOf(zero)
		for k := range len(strs) * 2 {
			v := reflect.New(typ)
			for i := range v.Elem().NumField() {
				if (k+i)%3 != 0 { // some fields left at zero
					setSample(t, v.Elem().Field(i), strs, ints, k+i)
				}
			}
			for _, args := range []Args{v.Elem().Interface().(Args), v.Interface().(Args)} {
				want, err := json.Marshal(args)
				require.NoError(t, err)
				got, ok := appendTyped([]byte("prefix"), args)
				require.True(t, ok, "%T", args)
				assert.Equal(t, "prefix"+string(want), string(got), "%T", args)
			}
		}
	}
	type embedding struct {
		ImageGenerationArgs
		Extra string `json:"extra"`
	}
	_, ok := appendTyped(nil, embedding{ImageGenerationArgs{Prompt: "p"}, "e"})
	assert.False(t, ok)
	a, _, err := encodeCreate(embedding{ImageGenerationArgs{Prompt: "p"}, "e"}, "")
	require.NoError(t, err)
	assert.JSONEq(t, `{"prompt":"p","extra":"e"}`, string(a.raw))
}
