package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/feature"
)

// webhookURLDoc describes the optional callback every generation tool accepts.
const webhookURLDoc = "Optional https URL, publicly reachable, that receives the signed generation.done, generation.error or generation.timeout event. A reference server run with -allow-http-webhooks also accepts http or https on a loopback host, for local tests."

type createGenerationInput struct {
	Feature    string         `json:"feature"`
	Args       map[string]any `json:"args"`
	WebhookURL string         `json:"webhookUrl,omitempty"`
}

// packedSchema is the input schema of create_generation, naming the
// features of the table.
func packedSchema() map[string]any {
	return map[string]any{"type": "object", "required": []string{"feature", "args"}, "properties": map[string]any{
		"feature": map[string]any{"type": "string", "description": "Feature key: " + strings.Join(feature.Names(), ", ") +
			" (older flat spellings such as logo-reveal are accepted)."},
		"args": map[string]any{"type": "object", "description": "The feature's arguments, as the matching generate_* tool takes them " +
			"(image/generation: prompt, aspectRatio, fineDetails, image). File ids, never URLs."},
		"webhookUrl": map[string]any{"type": "string", "description": webhookURLDoc},
	}}
}

type idInput struct {
	ID string `json:"id" jsonschema:"Generation id, as returned when the generation was submitted."`
}

type listGenerationsInput struct {
	Feature string    `json:"feature,omitempty" jsonschema:"Only this feature (canonical or legacy spelling)."`
	Limit   *pageSize `json:"limit,omitempty" jsonschema:"Page size; default 24, at most 100."`
	Cursor  string    `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page."`
}

// pageSize is a generation list's page size as an agent sends it: the route
// clamps it to 1..100, so one beyond an int's range is clamped too rather
// than refused by the decoder.
type pageSize int

// UnmarshalJSON reads any JSON number; the schema already refused one with
// a fraction.
func (p *pageSize) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("limit %s: %w", b, err)
	}
	*p = pageSize(max(min(f, math.MaxInt32), math.MinInt32))
	return nil
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

func readOnly() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
}

// addTools registers every tool of the endpoint.
func addTools(s *mcp.Server, ops api.StrictServerInterface) {
	for _, f := range feature.All {
		if f.Tool != "" {
			addGenerate(s, ops, f)
		}
	}

	addTool(s, &mcp.Tool{Name: "create_generation", InputSchema: packedSchema(),
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
				Feature: in.Feature, Limit: int(valueOr(in.Limit)), Cursor: in.Cursor,
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
			p := api.ListTemplatesParams{Feature: nonEmpty(in.Feature), Category: nonEmpty(in.Category),
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
				p.Favorites = nonEmpty("true")
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

// addGenerate registers the named generation tool of feature f. Its input
// schema is the contract's schema of f's arguments, plus webhookUrl, which
// belongs to the request; arguments are checked as the route checks them
// (feature.Check) before the operation is called.
func addGenerate(s *mcp.Server, ops api.StrictServerInterface, f feature.Info) {
	s.AddTool(&mcp.Tool{Name: f.Tool, Description: f.ToolDescription, InputSchema: inputSchema(f)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := generate(ctx, ops, f, req.Params.Arguments)
			if err != nil {
				return failure(err), nil
			}
			return toolResult(a, summarizeGeneration), nil
		})
}

// generate submits raw, the arguments of f's tool, unless they fail the
// route's checks, which answer as the route would: 400 invalid_argument.
func generate(ctx context.Context, ops api.StrictServerInterface, f feature.Info, raw json.RawMessage) (answer, error) {
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil || args == nil {
		return invalid("the arguments must be a JSON object")
	}
	webhookURL, ok := args["webhookUrl"].(string)
	if _, present := args["webhookUrl"]; present && !ok {
		return invalid("webhookUrl must be a string")
	}
	delete(args, "webhookUrl")
	if err := feature.Check(f.Name, args); err != nil {
		return invalid(err.Error())
	}
	return create(ctx, ops, mediagen.Feature(f.Name), args, webhookURL)
}

// invalid is the route's 400 answer with message.
func invalid(message string) (answer, error) {
	resp := api.CreateGeneration400JSONResponse{BadRequestJSONResponse: api.BadRequestJSONResponse{
		Error: api.ErrorDetail{Code: api.ErrorCodeInvalidArgument, Message: message},
	}}
	return record(api.CreateGenerationResponseObject(resp), nil, api.CreateGenerationResponseObject.VisitCreateGenerationResponse)
}

// inputSchema is the JSON schema of f's tool input: each argument with the
// contract's type, description, bounds, enum and default.
func inputSchema(f feature.Info) map[string]any {
	props := map[string]any{"webhookUrl": map[string]any{"type": "string", "description": webhookURLDoc}}
	required := []string{}
	for _, a := range f.Args {
		p := map[string]any{"type": a.Type, "description": a.Description}
		if a.Enum != nil {
			p["enum"] = a.Enum
		}
		if a.Default != nil {
			p["default"] = a.Default
		}
		if a.Pattern != nil {
			p["pattern"] = a.Pattern.String()
		}
		if a.MinLength > 0 {
			p["minLength"] = a.MinLength
		}
		if a.MaxLength > 0 {
			p["maxLength"] = a.MaxLength
		}
		if a.Type == "integer" {
			p["minimum"], p["maximum"] = a.Minimum, a.Maximum
		}
		props[a.Name] = p
		if a.Required {
			required = append(required, a.Name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// create submits a generation through the same operation as POST /v3/generations.
func create(ctx context.Context, ops api.StrictServerInterface, feature mediagen.Feature, args map[string]any, webhookURL string) (answer, error) {
	resp, err := ops.CreateGeneration(ctx, api.CreateGenerationRequestObject{Body: &api.CreateGenerationJSONRequestBody{
		Feature: feature, Args: args, WebhookURL: webhookURL,
	}})
	return record(resp, err, api.CreateGenerationResponseObject.VisitCreateGenerationResponse)
}

// valueOr returns *p, or 0 when the tool call left the number out.
func valueOr[T ~int](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// nonEmpty is s as an optional query parameter: nil when empty, so it is not sent.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
