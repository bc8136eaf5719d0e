package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
)

// webhook is the optional callback every generation tool accepts.
type webhook struct {
	WebhookURL string `json:"webhookUrl,omitempty" jsonschema:"Optional https URL, publicly reachable, that receives the signed generation.done, generation.error or generation.timeout event. A reference server run with -allow-http-webhooks also accepts http or https on a loopback host, for local tests."`
}

type adInput struct {
	Image       string `json:"image" jsonschema:"File id of the product photo advertised, from create_upload_url (never a URL or base64)."`
	Prompt      string `json:"prompt" jsonschema:"What the ad shows: setting, copy style, mood. A prompt from get_template_prompt may be used as is."`
	AspectRatio string `json:"aspectRatio,omitempty" jsonschema:"Aspect ratio: 1:1, 16:9, 9:16, 4:3 or 3:4."`
	FineDetails bool   `json:"fineDetails,omitempty" jsonschema:"Render finer details; costs more (pricing variant fineDetails)."`
	webhook
}

type youtubeThumbnailInput struct {
	Prompt      string `json:"prompt" jsonschema:"What the thumbnail shows. A prompt from get_template_prompt may be used as is."`
	Image       string `json:"image,omitempty" jsonschema:"Optional file id of a reference image, from create_upload_url (never a URL or base64)."`
	AspectRatio string `json:"aspectRatio,omitempty" jsonschema:"Aspect ratio: 16:9 (default), 1:1, 9:16, 4:3 or 3:4."`
	FineDetails bool   `json:"fineDetails,omitempty" jsonschema:"Render finer details; costs more (pricing variant fineDetails)."`
	webhook
}

type selfPortraitInput struct {
	Image               string `json:"image" jsonschema:"File id of a photo of the person, from create_upload_url (never a URL or base64)."`
	Prompt              string `json:"prompt" jsonschema:"Style and scene of the portrait. A prompt from get_template_prompt may be used as is."`
	AspectRatio         string `json:"aspectRatio,omitempty" jsonschema:"Aspect ratio: 1:1, 16:9, 9:16, 4:3 or 3:4."`
	PermissionConfirmed bool   `json:"permissionConfirmed,omitempty" jsonschema:"Must be true: confirms the caller has permission to produce this person's likeness; missing or false is refused (403 permission_required)."`
	webhook
}

type productShotInput struct {
	Image       string `json:"image" jsonschema:"File id of the product photo, from create_upload_url (never a URL or base64)."`
	Prompt      string `json:"prompt" jsonschema:"Scene, lighting and mood of the shot. A prompt from get_template_prompt may be used as is."`
	AspectRatio string `json:"aspectRatio,omitempty" jsonschema:"Aspect ratio: 1:1, 16:9, 9:16, 4:3 or 3:4."`
	FineDetails bool   `json:"fineDetails,omitempty" jsonschema:"Render finer details; costs more (pricing variant fineDetails)."`
	webhook
}

type avatarVideoInput struct {
	VoiceID             string `json:"voiceId" jsonschema:"Voice id, or a catalog voice's slug, from list_voices."`
	Script              string `json:"script" jsonschema:"What the avatar says, 1 to 5000 characters. The clip lasts about one second per 15 characters; billed per started 15 seconds."`
	Image               string `json:"image,omitempty" jsonschema:"Optional file id of a portrait to animate, from create_upload_url (never a URL or base64)."`
	AspectRatio         string `json:"aspectRatio,omitempty" jsonschema:"Aspect ratio: 1:1, 16:9, 9:16, 4:3 or 3:4."`
	Resolution          string `json:"resolution,omitempty" jsonschema:"Output resolution: 720p (default) or 1080p; 1080p costs more (pricing variant resolution)."`
	PermissionConfirmed bool   `json:"permissionConfirmed,omitempty" jsonschema:"Must be true: confirms the caller has permission to produce this person's likeness; missing or false is refused (403 permission_required)."`
	webhook
}

type logoRevealInput struct {
	Image         string `json:"image" jsonschema:"File id of the logo image, from create_upload_url (never a URL or base64). A backdrop baked into the file is absorbed before rendering."`
	Prompt        string `json:"prompt" jsonschema:"Motion direction: effect, scene, mood. Describe what happens around the logo, not the logo itself, and not beat durations."`
	Mode          string `json:"mode,omitempty" jsonschema:"intro (default) builds the logo in; outro starts on the logo and takes it apart."`
	AspectRatio   string `json:"aspectRatio,omitempty" jsonschema:"Aspect ratio: 16:9 (default) or 9:16."`
	Background    string `json:"background,omitempty" jsonschema:"Background colour as a CSS hex colour such as #101820."`
	GenerateAudio bool   `json:"generateAudio,omitempty" jsonschema:"Add sound (default false)."`
	Duration      *int   `json:"duration,omitempty" jsonschema:"Seconds of video, 3 to 10 (default 5); billed per second."`
	Resolution    string `json:"resolution,omitempty" jsonschema:"Output resolution: 720p (default) or 1080p; 1080p costs more (pricing variant resolution)."`
	webhook
}

type objectRevealInput struct {
	Image       string `json:"image" jsonschema:"File id of a photo of the object revealed, from create_upload_url (never a URL or base64)."`
	Prompt      string `json:"prompt" jsonschema:"How the object is revealed: effect, scene, mood. A prompt from get_template_prompt may be used as is."`
	AspectRatio string `json:"aspectRatio,omitempty" jsonschema:"Aspect ratio: 1:1, 16:9, 9:16, 4:3 or 3:4."`
	Duration    *int   `json:"duration,omitempty" jsonschema:"Seconds of video, 3 to 10 (default 5); billed per second."`
	Resolution  string `json:"resolution,omitempty" jsonschema:"Output resolution: 720p (default) or 1080p; 1080p costs more (pricing variant resolution)."`
	webhook
}

type voiceoverInput struct {
	VoiceID string `json:"voiceId" jsonschema:"Voice id, or a catalog voice's slug, from list_voices."`
	Script  string `json:"script" jsonschema:"Text to speak, 1 to 20000 characters; billed per started 1000 characters."`
	webhook
}

type createGenerationInput struct {
	Feature    string         `json:"feature" jsonschema:"Feature key: image/self-portrait, image/generation, image/product-shot, image/youtube-thumbnail, image/ad, video/logo-reveal, video/object-reveal, video/avatar or audio/voiceover (older flat spellings such as logo-reveal are accepted)."`
	Args       map[string]any `json:"args" jsonschema:"The feature's arguments, as the matching generate_* tool takes them (image/generation: prompt, aspectRatio, fineDetails, image). File ids, never URLs."`
	WebhookURL string         `json:"webhookUrl,omitempty" jsonschema:"Optional https URL, publicly reachable, that receives the signed generation.done, generation.error or generation.timeout event. A reference server run with -allow-http-webhooks also accepts http or https on a loopback host, for local tests."`
}

type idInput struct {
	ID string `json:"id" jsonschema:"Generation id, as returned when the generation was submitted."`
}

type listGenerationsInput struct {
	Feature string `json:"feature,omitempty" jsonschema:"Only this feature (canonical or legacy spelling)."`
	Limit   *int   `json:"limit,omitempty" jsonschema:"Page size; default 24, at most 100."`
	Cursor  string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page."`
}

type listTemplatesInput struct {
	Feature     string   `json:"feature,omitempty" jsonschema:"Feature whose templates to list (default image/self-portrait)."`
	Category    string   `json:"category,omitempty" jsonschema:"Only this category; categories depend on the feature, for example motion and outro for video/logo-reveal."`
	Title       []string `json:"title,omitempty" jsonschema:"Only templates with one of these exact titles."`
	PerCategory *int     `json:"perCategory,omitempty" jsonschema:"At most this many templates of each category, 1 to 50."`
	Limit       *int     `json:"limit,omitempty" jsonschema:"At most this many templates in all, 1 to 500."`
}

type templatePromptInput struct {
	PreviewID string `json:"previewId" jsonschema:"Preview id, from the previews of a template listed by list_templates."`
}

type uploadURLInput struct {
	Bytes       int64  `json:"bytes" jsonschema:"Exact size of the file in bytes, at most 31457280 (30 MB)."`
	ContentType string `json:"contentType" jsonschema:"Media type of the file, for example image/png or audio/wav: images, audio, video, PDF, ZIP, text or JSON."`
}

type listVoicesInput struct {
	Owner     string   `json:"owner,omitempty" jsonschema:"service for catalog voices, project for the project's own clones; omit for both."`
	Tag       []string `json:"tag,omitempty" jsonschema:"Catalog voices carrying every one of these tags (gender, age, accent, style, or a category such as narration)."`
	Locale    string   `json:"locale,omitempty" jsonschema:"Catalog voices of exactly this locale, such as en-US."`
	Favorites bool     `json:"favorites,omitempty" jsonschema:"Only voices the project starred."`
}

// generateTools are the documented named tools, one per feature but
// image/generation, which create_generation covers.
var generateTools = []struct {
	name, feature, desc string
	add                 func(s *mcp.Server, ops api.StrictServerInterface, name string, feature mediagen.Feature, desc string)
}{
	{"generate_ad", "image/ad", "Submit an ad image made from a product photo (image/ad). Returns the generation id at once; poll get_generation.", addGenerate[adInput]},
	{"generate_youtube_thumbnail", "image/youtube-thumbnail", "Submit a YouTube thumbnail (image/youtube-thumbnail). Returns the generation id at once; poll get_generation.", addGenerate[youtubeThumbnailInput]},
	{"generate_self_portrait", "image/self-portrait", "Submit a stylised portrait of the person in a photo (image/self-portrait); requires permissionConfirmed. Returns the generation id at once; poll get_generation.", addGenerate[selfPortraitInput]},
	{"generate_product_shot", "image/product-shot", "Submit a studio product shot made from a product photo (image/product-shot). Returns the generation id at once; poll get_generation.", addGenerate[productShotInput]},
	{"generate_avatar_video", "video/avatar", "Submit a talking-avatar video speaking a script with a voice (video/avatar); requires permissionConfirmed. Billed per started 15 s. Returns the generation id at once; poll get_generation every 5 to 10 s.", addGenerate[avatarVideoInput]},
	{"generate_logo_reveal", "video/logo-reveal", "Submit an animated logo reveal video (video/logo-reveal). Billed per second. Returns the generation id at once; poll get_generation every 5 to 10 s.", addGenerate[logoRevealInput]},
	{"generate_object_reveal", "video/object-reveal", "Submit an object reveal video made from a photo (video/object-reveal). Billed per second. Returns the generation id at once; poll get_generation every 5 to 10 s.", addGenerate[objectRevealInput]},
	{"generate_voiceover", "audio/voiceover", "Submit a voiceover of a script in a voice (audio/voiceover). Billed per started 1000 characters. Returns the generation id at once; poll get_generation.", addGenerate[voiceoverInput]},
}

func readOnly() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
}

// addTools registers every tool of the endpoint.
func addTools(s *mcp.Server, ops api.StrictServerInterface) {
	for _, t := range generateTools {
		t.add(s, ops, t.name, mediagen.Feature(t.feature), t.desc)
	}

	addTool(s, &mcp.Tool{Name: "create_generation",
		Description: "Submit a generation of any feature in packed form: feature plus its args. Charges the balance and returns the generation id at once with status pending; poll get_generation."},
		summarizeGeneration,
		func(ctx context.Context, in createGenerationInput) (answer, error) {
			return create(ctx, ops, mediagen.Feature(in.Feature), in.Args, in.WebhookURL)
		})

	addTool(s, &mcp.Tool{Name: "get_generation", Annotations: readOnly(),
		Description: "Get a generation as GET /v3/generations/{id} returns it: status, and once done the output URL. Poll every few seconds (5 to 10 for video) while pending or running."},
		summarizeGeneration,
		func(ctx context.Context, in idInput) (answer, error) {
			resp, err := ops.GetGeneration(ctx, api.GetGenerationRequestObject{ID: in.ID})
			return record(resp, err, api.GetGenerationResponseObject.VisitGetGenerationResponse)
		})

	addTool(s, &mcp.Tool{Name: "list_generations", Annotations: readOnly(),
		Description: "List the project's generations, newest first, one page at a time; pass nextCursor as cursor for the next page."},
		summarizeGenerationList,
		func(ctx context.Context, in listGenerationsInput) (answer, error) {
			resp, err := ops.ListGenerations(ctx, api.ListGenerationsRequestObject{Params: api.ListGenerationsParams{
				Feature: in.Feature, Limit: valueOr(in.Limit), Cursor: in.Cursor,
			}})
			return record(resp, err, api.ListGenerationsResponseObject.VisitListGenerationsResponse)
		})

	destructive := true
	addTool(s, &mcp.Tool{Name: "delete_generation",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive, IdempotentHint: true},
		Description: "Delete a generation and its assets. Nothing is refunded and work in flight is not cancelled."},
		summarizeDeleted,
		func(ctx context.Context, in idInput) (answer, error) {
			resp, err := ops.DeleteGeneration(ctx, api.DeleteGenerationRequestObject{ID: in.ID})
			return record(resp, err, api.DeleteGenerationResponseObject.VisitDeleteGenerationResponse)
		})

	addTool(s, &mcp.Tool{Name: "list_templates", Annotations: readOnly(),
		Description: "List ready-made styles (templates) of a feature, in creation order. Each template has previews; get_template_prompt turns a preview id into the prompt to send."},
		summarizeTemplates,
		func(ctx context.Context, in listTemplatesInput) (answer, error) {
			p := api.ListTemplatesParams{Feature: in.Feature, Category: in.Category,
				PerCategory: in.PerCategory, Limit: in.Limit, Title: in.Title}
			resp, err := ops.ListTemplates(ctx, api.ListTemplatesRequestObject{Params: p})
			return record(resp, err, api.ListTemplatesResponseObject.VisitListTemplatesResponse)
		})

	addTool(s, &mcp.Tool{Name: "get_template_prompt", Annotations: readOnly(),
		Description: "Resolve a template preview id to its prompt: the exact string to pass as args.prompt."},
		summarizeTemplatePrompt,
		func(ctx context.Context, in templatePromptInput) (answer, error) {
			resp, err := ops.GetTemplatePreview(ctx, api.GetTemplatePreviewRequestObject{PreviewID: in.PreviewID})
			return record(resp, err, api.GetTemplatePreviewResponseObject.VisitGetTemplatePreviewResponse)
		})

	addTool(s, &mcp.Tool{Name: "get_pricing", Annotations: readOnly(),
		Description: "Read the price of every feature on the project's plan (USD per unit, with variant multipliers). Nothing is held or quoted."},
		summarizePricing,
		func(ctx context.Context, _ struct{}) (answer, error) {
			resp, err := ops.GetPricing(ctx, api.GetPricingRequestObject{})
			return record(resp, err, api.GetPricingResponseObject.VisitGetPricingResponse)
		})

	addTool(s, &mcp.Tool{Name: "create_upload_url",
		Description: "Reserve a file id and a signed upload URL for a reference image or audio file. PUT the bytes to uploadUrl within expiresIn seconds with exactly the returned headers and no Authorization header; then pass file.id in args."},
		summarizeUploadURL,
		func(ctx context.Context, in uploadURLInput) (answer, error) {
			resp, err := ops.CreateUploadURL(ctx, api.CreateUploadURLRequestObject{Body: &api.CreateUploadURLJSONRequestBody{
				Bytes: in.Bytes, ContentType: in.ContentType,
			}})
			return record(resp, err, api.CreateUploadURLResponseObject.VisitCreateUploadURLResponse)
		})

	addTool(s, &mcp.Tool{Name: "list_voices", Annotations: readOnly(),
		Description: "List voices for voiceId: the project's clones first, then the catalog. Tag and locale filter catalog voices only."},
		summarizeVoices,
		func(ctx context.Context, in listVoicesInput) (answer, error) {
			p := api.ListVoicesParams{Tag: in.Tag}
			if in.Owner != "" {
				p.Owner = &in.Owner
			}
			if in.Locale != "" {
				p.Locale = &in.Locale
			}
			if in.Favorites {
				p.Favorites = "true"
			}
			resp, err := ops.ListVoices(ctx, api.ListVoicesRequestObject{Params: p})
			return record(resp, err, api.ListVoicesResponseObject.VisitListVoicesResponse)
		})
}

// addTool registers a tool whose handler calls one operation and answers with
// what its route answers.
func addTool[In any](s *mcp.Server, t *mcp.Tool, summarize func([]byte) string, call func(context.Context, In) (answer, error)) {
	mcp.AddTool(s, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		a, err := call(ctx, in)
		if err != nil {
			return failure(err), nil, nil
		}
		return toolResult(a, summarize), nil, nil
	})
}

// addGenerate registers a named generation tool: its typed input becomes the
// feature's args, minus webhookUrl, which belongs to the request.
func addGenerate[In any](s *mcp.Server, ops api.StrictServerInterface, name string, feature mediagen.Feature, desc string) {
	addTool(s, &mcp.Tool{Name: name, Description: desc}, summarizeGeneration,
		func(ctx context.Context, in In) (answer, error) {
			args, err := toArgs(in)
			if err != nil {
				return answer{}, err
			}
			webhookURL, _ := args["webhookUrl"].(string)
			delete(args, "webhookUrl")
			return create(ctx, ops, feature, args, webhookURL)
		})
}

// toArgs turns a typed input into the JSON object an HTTP caller would send,
// so the operation sees the same value types (numbers as float64).
func toArgs(in any) (map[string]any, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode args: %w", err)
	}
	args := map[string]any{}
	if err := json.Unmarshal(b, &args); err != nil {
		return nil, fmt.Errorf("decode args: %w", err)
	}
	return args, nil
}

// create submits a generation through the same operation as POST /v3/generations.
func create(ctx context.Context, ops api.StrictServerInterface, feature mediagen.Feature, args map[string]any, webhookURL string) (answer, error) {
	resp, err := ops.CreateGeneration(ctx, api.CreateGenerationRequestObject{Body: &api.CreateGenerationJSONRequestBody{
		Feature: feature, Args: args, WebhookURL: webhookURL,
	}})
	return record(resp, err, api.CreateGenerationResponseObject.VisitCreateGenerationResponse)
}

// valueOr returns *p, or 0 when the tool call left the number out.
func valueOr(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
