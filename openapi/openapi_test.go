package openapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/openapi"
)

func load(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openapi.Spec())
	require.NoError(t, err)
	return doc
}

func TestSpecValidatesAsOpenAPI30(t *testing.T) {
	doc := load(t)
	require.NoError(t, doc.Validate(context.Background()))
	assert.Equal(t, "3.0.3", doc.OpenAPI)
	assert.Equal(t, "1.0.0", doc.Info.Version)
}

// Every path and method of the interface document, and the statuses it names for each.
func TestEveryEndpointAndStatusOfTheInterfaceDocument(t *testing.T) {
	doc := load(t)
	want := []struct {
		method, path string
		statuses     []string
	}{
		{"POST", "/v3/generations", []string{"200", "400", "401", "402", "403"}},
		{"GET", "/v3/generations", []string{"200", "401"}},
		{"GET", "/v3/generations/{id}", []string{"200", "401", "404"}},
		{"DELETE", "/v3/generations/{id}", []string{"200", "401", "404"}},
		{"POST", "/v3/files/upload", []string{"200", "400", "401"}},
		{"POST", "/v3/files/upload-url", []string{"200", "400", "401", "413", "415"}},
		{"GET", "/v3/pricing", []string{"200", "401"}},
		{"POST", "/v3/voices", []string{"200", "400", "401", "402", "429"}},
		{"GET", "/v3/voices", []string{"200", "400", "401"}},
		{"GET", "/v3/voices/{id}", []string{"200", "401", "404"}},
		{"DELETE", "/v3/voices/{id}", []string{"200", "401", "404"}},
		{"PUT", "/v3/voices/{id}/favorite", []string{"200", "401", "404"}},
		{"DELETE", "/v3/voices/{id}/favorite", []string{"200", "401", "404"}},
		{"GET", "/v3/templates", []string{"200", "401"}},
		{"GET", "/v3/templates/{previewId}", []string{"200", "401", "404"}},
		{"POST", "/v3/mcp", []string{"200", "401"}},
		{"GET", "/v3/mcp", []string{"405"}},
		{"DELETE", "/v3/mcp", []string{"405"}},
		{"GET", "/v3/openapi.json", []string{"200"}},
	}
	seen := 0
	for _, w := range want {
		item := doc.Paths.Find(w.path)
		require.NotNil(t, item, w.path)
		op := item.GetOperation(w.method)
		require.NotNil(t, op, "%s %s", w.method, w.path)
		for _, code := range w.statuses {
			assert.NotNil(t, op.Responses.Value(code), "%s %s answers %s", w.method, w.path, code)
		}
		seen++
	}
	// Nothing beyond the interface document.
	ops := 0
	for _, item := range doc.Paths.Map() {
		ops += len(item.Operations())
	}
	assert.Equal(t, seen, ops)
}

func TestFeatureNamesCanonicalAndLegacy(t *testing.T) {
	doc := load(t)
	enum := doc.Components.Schemas["Feature"].Value.Enum
	for _, f := range []string{
		"image/self-portrait", "image/generation", "image/product-shot", "image/youtube-thumbnail", "image/ad",
		"video/logo-reveal", "video/object-reveal", "video/avatar", "audio/voiceover",
		"image-generation", "logo-reveal",
	} {
		assert.Contains(t, enum, f)
	}
	legacy, ok := doc.Components.Schemas["Feature"].Value.Extensions["x-legacy-spellings"].(map[string]any)
	require.True(t, ok, "x-legacy-spellings maps every canonical feature to its flat spelling")
	assert.Len(t, legacy, 9)
	for canon, flat := range legacy {
		assert.Contains(t, enum, canon)
		assert.Contains(t, enum, flat)
	}
}

// Each feature has its own arguments schema, named from the create request so
// the generator keeps it.
func TestArgumentSchemaPerFeature(t *testing.T) {
	doc := load(t)
	argsDesc := doc.Components.Schemas["CreateGenerationRequest"].Value.Properties["args"].Value.Description
	for feature, schema := range map[string]string{
		"image/self-portrait": "SelfPortraitArgs", "image/generation": "ImageGenerationArgs",
		"image/product-shot": "ProductShotArgs", "image/youtube-thumbnail": "YoutubeThumbnailArgs",
		"image/ad": "AdArgs", "video/logo-reveal": "LogoRevealArgs", "video/object-reveal": "ObjectRevealArgs",
		"video/avatar": "AvatarArgs", "audio/voiceover": "VoiceoverArgs",
	} {
		require.Contains(t, doc.Components.Schemas, schema)
		assert.Contains(t, argsDesc, "`"+feature+"`: #/components/schemas/"+schema)
	}
	logo := doc.Components.Schemas["LogoRevealArgs"].Value
	for _, arg := range []string{"image", "prompt", "mode", "aspectRatio", "background", "generateAudio", "duration"} {
		assert.Contains(t, logo.Properties, arg)
	}
	assert.ElementsMatch(t, []any{"intro", "outro"}, logo.Properties["mode"].Value.Enum)
	assert.ElementsMatch(t, []any{"16:9", "9:16"}, logo.Properties["aspectRatio"].Value.Enum)
}

func TestSchemasCarryTheDocumentedFields(t *testing.T) {
	doc := load(t)
	fields := map[string][]string{
		"Generation":                {"id", "projectId", "feature", "kind", "status", "title", "params", "output", "error", "balanceUsed", "requestDate", "responseDate", "expiresAt"},
		"Output":                    {"image", "video", "audio", "mime", "poster", "durationMs", "width", "height"},
		"File":                      {"id", "originalName", "size"},
		"PricingEntry":              {"price", "variants"},
		"Voice":                     {"id", "owner", "status", "name", "description", "slug", "tags", "locale", "favorite", "preview", "error", "requestDate", "responseDate"},
		"Template":                  {"id", "title", "category", "feature", "previews"},
		"TemplatePreviewRef":        {"id", "gender", "image", "video"},
		"TemplatePreview":           {"id", "templateId", "title", "feature", "gender", "prompt"},
		"UploadURL":                 {"file", "uploadUrl", "method", "headers", "expiresIn"},
		"InsufficientBalanceDetail": {"code", "message", "required", "balance"},
	}
	for name, props := range fields {
		s := doc.Components.Schemas[name]
		require.NotNil(t, s, name)
		for _, p := range props {
			assert.Contains(t, s.Value.Properties, p, "%s.%s", name, p)
		}
	}
	list := doc.Components.Schemas["GenerationList"].Value
	assert.Contains(t, list.Required, "nextCursor")
	assert.True(t, list.Properties["nextCursor"].Value.Nullable)

	limit := doc.Paths.Find("/v3/generations").Get.Parameters.GetByInAndName("query", "limit").Schema.Value
	assert.Equal(t, float64(24), limit.Default)
	assert.Nil(t, limit.Max, "limit above 100 is clamped, so no maximum a validator would reject")
	assert.Contains(t, doc.Paths.Find("/v3/generations").Get.Parameters.GetByInAndName("query", "limit").Description, "clamped")

	tpl := doc.Paths.Find("/v3/templates").Get.Parameters
	assert.Equal(t, 1.0, *tpl.GetByInAndName("query", "perCategory").Schema.Value.Min)
	assert.Equal(t, 50.0, *tpl.GetByInAndName("query", "perCategory").Schema.Value.Max)
	assert.Equal(t, 500.0, *tpl.GetByInAndName("query", "limit").Schema.Value.Max)
	assert.Equal(t, "image/self-portrait", tpl.GetByInAndName("query", "feature").Schema.Value.Default)
}

func TestErrorsRetryAfterAndEventStream(t *testing.T) {
	doc := load(t)
	gen := doc.Paths.Find("/v3/generations").Post
	assert.Equal(t, "#/components/schemas/InsufficientBalanceError", gen.Responses.Value("402").Value.Content.Get("application/json").Schema.Ref)
	assert.Equal(t, "#/components/schemas/Error", gen.Responses.Value("400").Value.Content.Get("application/json").Schema.Ref)

	rl := doc.Paths.Find("/v3/voices").Post.Responses.Value("429").Value
	require.Contains(t, rl.Headers, "Retry-After")
	assert.True(t, rl.Headers["Retry-After"].Value.Required)

	mcp := doc.Paths.Find("/v3/mcp").Post.Responses.Value("200").Value
	assert.NotNil(t, mcp.Content.Get("text/event-stream"))
}

func TestSecurityIsTheRawKeyInAuthorization(t *testing.T) {
	doc := load(t)
	scheme := doc.Components.SecuritySchemes["apiKey"].Value
	assert.Equal(t, "apiKey", scheme.Type, "an apiKey scheme, not http bearer")
	assert.Equal(t, "header", scheme.In)
	assert.Equal(t, "Authorization", scheme.Name)
	require.Len(t, doc.Security, 1)
	assert.Contains(t, doc.Security[0], "apiKey")
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			assert.Nil(t, op.Security, "%s %s must not override the global security", method, path)
		}
	}
}

func TestWebhookCallbacks(t *testing.T) {
	doc := load(t)
	for path, body := range map[string]string{"/v3/generations": "GenerationEvent", "/v3/voices": "VoiceEvent"} {
		op := doc.Paths.Find(path).Post
		require.Len(t, op.Callbacks, 1, path)
		for _, cb := range op.Callbacks {
			item := cb.Value.Value("{$request.body#/webhookUrl}")
			require.NotNil(t, item, path)
			post := item.Post
			assert.NotNil(t, post.Parameters.GetByInAndName("header", "X-Service-Timestamp"))
			assert.NotNil(t, post.Parameters.GetByInAndName("header", "X-Service-Signature"))
			assert.Equal(t, "#/components/schemas/"+body, post.RequestBody.Value.Content.Get("application/json").Schema.Ref)
		}
	}
	assert.ElementsMatch(t, []any{"generation.done", "generation.error", "generation.timeout"}, doc.Components.Schemas["GenerationEventName"].Value.Enum)
	assert.ElementsMatch(t, []any{"voice.done", "voice.error"}, doc.Components.Schemas["VoiceEventName"].Value.Enum)
}

// Every number is a float64 in Go: format double everywhere.
func TestEveryNumberIsDouble(t *testing.T) {
	var doc any
	require.NoError(t, json.Unmarshal(openapi.Spec(), &doc))
	var walk func(node any, path string)
	walk = func(node any, path string) {
		switch n := node.(type) {
		case map[string]any:
			if n["type"] == "number" {
				assert.Equal(t, "double", n["format"], path)
			}
			for k, v := range n {
				walk(v, path+"/"+k)
			}
		case []any:
			for _, v := range n {
				walk(v, path)
			}
		}
	}
	walk(doc, "")
}

func TestUnconfirmedChoicesAreListed(t *testing.T) {
	got := openapi.Unconfirmed()
	for _, want := range []string{
		"/components/schemas/Error",
		"/components/schemas/ErrorCode",
		"/components/schemas/Output/properties/text",
		"/components/schemas/Output/properties/poster",
		"/components/schemas/PricingUnit",
		"/components/schemas/SelfPortraitArgs/properties/permissionConfirmed",
		"/components/schemas/AvatarArgs/properties/permissionConfirmed",
		"/components/schemas/LogoRevealArgs/properties/duration",
	} {
		assert.Contains(t, got, want)
	}
	// Documented facts are not marked.
	for _, stated := range []string{
		"/components/schemas/Generation",
		"/components/schemas/InsufficientBalanceError",
		"/components/schemas/LogoRevealArgs/properties/mode",
	} {
		assert.NotContains(t, got, stated)
	}
	for _, p := range got {
		assert.True(t, strings.HasPrefix(p, "/components/") || strings.HasPrefix(p, "/paths/"), p)
	}
}

// TestFileFieldsSayWhoSetsThem checks that File's originalName and size say
// which route sets them: the multipart route; the signed route's answer has
// only the id, and package upload fills in size itself, so "multipart route
// only" would be wrong for a File a Go user holds.
func TestFileFieldsSayWhoSetsThem(t *testing.T) {
	props := load(t).Components.Schemas["File"].Value.Properties
	for _, name := range []string{"originalName", "size"} {
		desc := props[name].Value.Description
		assert.Contains(t, desc, "set by the multipart route (`POST /v3/files/upload`)", name)
		assert.Contains(t, desc, "signed route's answer (`POST /v3/files/upload-url`) carries only the id", name)
		assert.NotContains(t, desc, "route only", name)
	}
	assert.Contains(t, props["size"].Value.Description, "package upload fills in the size it sent")
}
