package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/feature"
)

// projectKey is where the test middleware stores the caller, as the reference
// server's auth middleware stores the authenticated project.
type projectKey struct{}

// fakeOps implements the operations the tools under test call; the embedded
// interface is nil, so an unexpected call panics and fails the test.
type fakeOps struct {
	api.StrictServerInterface

	mu          sync.Mutex
	balance     float64
	price       float64
	generations map[string]mediagen.Generation
	created     []api.CreateGenerationRequestObject
	projects    []string // the project seen in the context of each call
	templates   []api.ListTemplatesParams
	voices      []api.ListVoicesParams
	lists       []api.ListGenerationsParams
	fail        error
}

func newFakeOps() *fakeOps {
	return &fakeOps{balance: 10, price: 2, generations: map[string]mediagen.Generation{}}
}

func (f *fakeOps) seen(ctx context.Context) {
	p, _ := ctx.Value(projectKey{}).(string)
	f.projects = append(f.projects, p)
}

func (f *fakeOps) CreateGeneration(ctx context.Context, req api.CreateGenerationRequestObject) (api.CreateGenerationResponseObject, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	f.created = append(f.created, req)
	if f.fail != nil {
		return nil, f.fail
	}
	if f.balance < f.price {
		return api.CreateGeneration402JSONResponse{InsufficientBalanceJSONResponse: api.InsufficientBalanceJSONResponse{
			Error: api.InsufficientBalanceDetail{
				Code:     api.InsufficientBalanceDetailCodeInsufficientBalance,
				Message:  "balance too low",
				Required: f.price,
				Balance:  f.balance,
			},
		}}, nil
	}
	f.balance -= f.price
	g := mediagen.Generation{
		ID:          fmt.Sprintf("gen_%d", len(f.generations)+1),
		ProjectID:   f.projects[len(f.projects)-1],
		Feature:     req.Body.Feature,
		Kind:        mediagen.KindVideo,
		Status:      mediagen.GenerationStatusPending,
		Params:      req.Body.Args,
		BalanceUsed: f.price,
		RequestDate: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	f.generations[g.ID] = g
	return api.CreateGeneration200JSONResponse{Generation: g}, nil
}

func (f *fakeOps) GetGeneration(ctx context.Context, req api.GetGenerationRequestObject) (api.GetGenerationResponseObject, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	g, ok := f.generations[req.ID]
	if !ok {
		return api.GetGeneration404JSONResponse{NotFoundJSONResponse: api.NotFoundJSONResponse{
			Error: api.ErrorDetail{Code: api.ErrorCodeNotFound, Message: "no generation " + req.ID},
		}}, nil
	}
	return api.GetGeneration200JSONResponse{Generation: g}, nil
}

func (f *fakeOps) ListTemplates(ctx context.Context, req api.ListTemplatesRequestObject) (api.ListTemplatesResponseObject, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	f.templates = append(f.templates, req.Params)
	return api.ListTemplates200JSONResponse{Templates: []mediagen.Template{{ID: "t1", Title: "Glitch", Category: "motion", Feature: mediagen.FeatureVideoLogoReveal}}}, nil
}

func (f *fakeOps) ListVoices(ctx context.Context, req api.ListVoicesRequestObject) (api.ListVoicesResponseObject, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	f.voices = append(f.voices, req.Params)
	return api.ListVoices200JSONResponse{Voices: []mediagen.Voice{}}, nil
}

func (f *fakeOps) ListGenerations(ctx context.Context, req api.ListGenerationsRequestObject) (api.ListGenerationsResponseObject, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	f.lists = append(f.lists, req.Params)
	next := "c2"
	if req.Params.Cursor != "" || req.Params.Limit == 0 || req.Params.Limit != 1 {
		return api.ListGenerations200JSONResponse{Generations: []mediagen.Generation{}}, nil
	}
	return api.ListGenerations200JSONResponse{Generations: []mediagen.Generation{{ID: "gen_9"}}, NextCursor: &next}, nil
}

func (f *fakeOps) DeleteGeneration(ctx context.Context, req api.DeleteGenerationRequestObject) (api.DeleteGenerationResponseObject, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	if _, ok := f.generations[req.ID]; !ok {
		return api.DeleteGeneration404JSONResponse{NotFoundJSONResponse: api.NotFoundJSONResponse{
			Error: api.ErrorDetail{Code: api.ErrorCodeNotFound, Message: "no generation " + req.ID},
		}}, nil
	}
	delete(f.generations, req.ID)
	return api.DeleteGeneration200JSONResponse{Success: true}, nil
}

func (f *fakeOps) GetPricing(ctx context.Context, _ api.GetPricingRequestObject) (api.GetPricingResponseObject, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	return api.GetPricing200JSONResponse{Prices: map[string]mediagen.PricingEntry{"image/ad": {Price: f.price}}}, nil
}

func (f *fakeOps) GetTemplatePreview(ctx context.Context, req api.GetTemplatePreviewRequestObject) (api.GetTemplatePreviewResponseObject, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	return api.GetTemplatePreview200JSONResponse{Preview: mediagen.TemplatePreview{
		ID: req.PreviewID, TemplateID: "t1", Title: "Glitch", Feature: mediagen.FeatureVideoLogoReveal, Gender: "any", Prompt: "digital glitch sweep",
	}}, nil
}

func (f *fakeOps) CreateUploadURL(ctx context.Context, req api.CreateUploadURLRequestObject) (api.CreateUploadURLResponseObject, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	if req.Body.ContentType == "application/x-msdownload" {
		return api.CreateUploadURL415JSONResponse{Error: api.ErrorDetail{Code: api.ErrorCodeUnsupportedMediaType, Message: "type not accepted"}}, nil
	}
	return api.CreateUploadURL200JSONResponse{
		File:      mediagen.File{ID: "file_1"},
		UploadURL: "https://storage.example.com/file_1?sig=x",
		Method:    mediagen.UploadURLMethodPUT,
		Headers:   mediagen.UploadHeaders{ContentType: req.Body.ContentType, ContentLength: req.Body.Bytes},
		ExpiresIn: 900,
	}, nil
}

// setup serves New(ops) at a path-prefixed address behind a middleware that
// puts the X-Project header into the request context, and connects the SDK's
// own client to it.
func setup(t *testing.T, ops api.StrictServerInterface) (*mcp.ClientSession, string) {
	t.Helper()
	handler := New(ops)
	mux := http.NewServeMux()
	mux.Handle("/v3/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), projectKey{}, r.Header.Get("X-Project"))
		handler.ServeHTTP(w, r.WithContext(ctx))
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	endpoint := srv.URL + "/v3/mcp"

	client := mcp.NewClient(&mcp.Implementation{Name: "agent-test", Version: "0.0.1"}, nil)
	session, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: headerTransport{name: "X-Project", value: "proj_test"}},
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = session.Close() })
	return session, endpoint
}

// headerTransport sets one header on every request, as an agent sets its API key.
type headerTransport struct{ name, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

func call(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "a tool answer is never a protocol error")
	return res
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured decodes a result's structured content into T.
func structured[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var v T
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

var allTools = []string{
	"generate_ad", "generate_youtube_thumbnail", "generate_self_portrait", "generate_product_shot",
	"generate_avatar_video", "generate_logo_reveal", "generate_object_reveal", "generate_voiceover",
	"create_generation", "get_generation",
	"list_templates", "get_template_prompt", "get_pricing", "create_upload_url", "list_voices",
	"list_generations", "delete_generation",
}

func TestListTools(t *testing.T) {
	session, _ := setup(t, newFakeOps())
	res, err := session.ListTools(t.Context(), nil)
	require.NoError(t, err)

	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	require.Len(t, byName, len(allTools))
	for _, name := range allTools {
		tool, ok := byName[name]
		require.True(t, ok, "tool %s missing", name)
		assert.NotEmpty(t, tool.Description, name)
		schema, ok := tool.InputSchema.(map[string]any)
		require.True(t, ok, "tool %s has no input schema", name)
		assert.Equal(t, "object", schema["type"], name)
		if strings.HasPrefix(name, "generate_") || name == "create_generation" {
			props, _ := schema["properties"].(map[string]any)
			assert.Contains(t, props, "webhookUrl", name)
		}
	}

	logo := byName["generate_logo_reveal"].InputSchema.(map[string]any)
	props := logo["properties"].(map[string]any)
	for _, arg := range []string{"image", "prompt", "mode", "aspectRatio", "background", "generateAudio", "duration", "resolution"} {
		require.Contains(t, props, arg)
		assert.NotEmpty(t, props[arg].(map[string]any)["description"], arg)
	}
	assert.ElementsMatch(t, []any{"image", "prompt"}, logo["required"])

	packed := byName["create_generation"].InputSchema.(map[string]any)
	assert.ElementsMatch(t, []any{"feature", "args"}, packed["required"])
	assert.True(t, byName["get_generation"].Annotations.ReadOnlyHint)
}

func TestCreateGenerationPacked(t *testing.T) {
	ops := newFakeOps()
	session, _ := setup(t, ops)

	res := call(t, session, "create_generation", map[string]any{
		"feature":    "image/generation",
		"args":       map[string]any{"prompt": "a red fox", "fineDetails": true},
		"webhookUrl": "https://hooks.example.com/mediagen",
	})
	require.False(t, res.IsError, text(res))

	require.Len(t, ops.created, 1)
	body := ops.created[0].Body
	assert.Equal(t, mediagen.Feature("image/generation"), body.Feature)
	assert.Equal(t, map[string]any{"prompt": "a red fox", "fineDetails": true}, body.Args)
	require.NotNil(t, body.WebhookURL)
	assert.Equal(t, "https://hooks.example.com/mediagen", body.WebhookURL)
	assert.Equal(t, []string{"proj_test"}, ops.projects, "the operation must see the HTTP request's context")

	env := structured[api.GenerationEnvelope](t, res)
	assert.Equal(t, "gen_1", env.Generation.ID)
	assert.Equal(t, mediagen.GenerationStatusPending, env.Generation.Status)
	assert.Contains(t, text(res), "gen_1")
	assert.Contains(t, text(res), "pending")
	assert.Contains(t, text(res), "get_generation")
}

func TestGenerateLogoReveal(t *testing.T) {
	ops := newFakeOps()
	session, _ := setup(t, ops)

	res := call(t, session, "generate_logo_reveal", map[string]any{
		"image":      "file_logo",
		"prompt":     "sparks gather into the mark",
		"mode":       "outro",
		"duration":   7,
		"webhookUrl": "https://hooks.example.com/x",
	})
	require.False(t, res.IsError, text(res))

	require.Len(t, ops.created, 1)
	body := ops.created[0].Body
	assert.Equal(t, mediagen.FeatureVideoLogoReveal, body.Feature)
	assert.Equal(t, map[string]any{
		"image": "file_logo", "prompt": "sparks gather into the mark", "mode": "outro", "duration": float64(7),
	}, body.Args, "args are what an HTTP caller would send; webhookUrl is not an argument")
	require.NotNil(t, body.WebhookURL)
	assert.Equal(t, "https://hooks.example.com/x", body.WebhookURL)
	assert.Equal(t, []string{"proj_test"}, ops.projects)
	assert.Equal(t, "gen_1", structured[api.GenerationEnvelope](t, res).Generation.ID)
}

func TestGenerateOmitsUnsetArguments(t *testing.T) {
	ops := newFakeOps()
	session, _ := setup(t, ops)

	res := call(t, session, "generate_voiceover", map[string]any{"voiceId": "warm-narrator", "script": "Hello."})
	require.False(t, res.IsError, text(res))
	require.Len(t, ops.created, 1)
	assert.Equal(t, mediagen.FeatureAudioVoiceover, ops.created[0].Body.Feature)
	assert.Equal(t, map[string]any{"voiceId": "warm-narrator", "script": "Hello."}, ops.created[0].Body.Args)
	assert.Empty(t, ops.created[0].Body.WebhookURL)
}

func TestMissingRequiredArgumentIsToolError(t *testing.T) {
	ops := newFakeOps()
	session, _ := setup(t, ops)

	res := call(t, session, "generate_logo_reveal", map[string]any{"image": "file_logo"})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "prompt")
	assert.Empty(t, ops.created, "nothing is submitted")
}

func TestGetGenerationRoundTrip(t *testing.T) {
	ops := newFakeOps()
	session, _ := setup(t, ops)

	created := call(t, session, "generate_product_shot", map[string]any{"image": "file_1", "prompt": "on marble"})
	require.False(t, created.IsError, text(created))
	id := structured[api.GenerationEnvelope](t, created).Generation.ID

	got := call(t, session, "get_generation", map[string]any{"id": id})
	require.False(t, got.IsError, text(got))
	want, err := json.Marshal(api.GenerationEnvelope{Generation: ops.generations[id]})
	require.NoError(t, err)
	gotJSON, err := json.Marshal(got.StructuredContent)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(gotJSON), "the same body GET /v3/generations/{id} answers")
	assert.Equal(t, mediagen.FeatureImageProductShot, structured[api.GenerationEnvelope](t, got).Generation.Feature)

	missing := call(t, session, "get_generation", map[string]any{"id": "gen_nope"})
	assert.True(t, missing.IsError)
	assert.Contains(t, text(missing), "404 not_found")
	assert.Contains(t, text(missing), "gen_nope")
}

func TestInsufficientBalanceIsToolError(t *testing.T) {
	ops := newFakeOps()
	ops.balance = 1.5
	session, _ := setup(t, ops)

	res := call(t, session, "create_generation", map[string]any{"feature": "image/generation", "args": map[string]any{"prompt": "x"}})
	require.True(t, res.IsError)
	require.NotEmpty(t, res.Content)
	summary, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok)
	assert.Equal(t, "HTTP 402 insufficient_balance: this call costs 2.00 USD; the balance is 1.50 USD", summary.Text,
		"the amounts, each once, in place of the body's message")

	body := structured[api.InsufficientBalanceError](t, res)
	assert.Equal(t, 2.0, body.Error.Required)
	assert.Equal(t, 1.5, body.Error.Balance)
}

func TestOperationFailureIsToolError(t *testing.T) {
	ops := newFakeOps()
	ops.fail = errors.New("store unavailable")
	session, _ := setup(t, ops)

	res := call(t, session, "generate_ad", map[string]any{"image": "f", "prompt": "p"})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "500")
	assert.Contains(t, text(res), "store unavailable")
}

func TestListParameters(t *testing.T) {
	ops := newFakeOps()
	session, _ := setup(t, ops)

	res := call(t, session, "list_templates", map[string]any{
		"feature": "logo-reveal", "title": []string{"Glitch", "Ink"}, "perCategory": 2,
	})
	require.False(t, res.IsError, text(res))
	require.Len(t, ops.templates, 1)
	p := ops.templates[0]
	require.NotNil(t, p.Feature)
	assert.Equal(t, "logo-reveal", *p.Feature)
	require.NotZero(t, p.Title)
	assert.Equal(t, []string{"Glitch", "Ink"}, p.Title)
	require.NotNil(t, p.PerCategory)
	assert.Equal(t, 2, *p.PerCategory)
	assert.Nil(t, p.Category, "an argument not given is not sent")
	assert.Nil(t, p.Limit)
	assert.Contains(t, text(res), "Glitch")

	res = call(t, session, "list_voices", map[string]any{"tag": []string{"female", "narration"}, "favorites": true})
	require.False(t, res.IsError, text(res))
	require.Len(t, ops.voices, 1)
	v := ops.voices[0]
	assert.Nil(t, v.Owner)
	require.NotNil(t, v.Tag)
	assert.Equal(t, []string{"female", "narration"}, v.Tag)
	require.NotNil(t, v.Favorites)
	assert.Equal(t, "true", *v.Favorites)

	assert.True(t, slices.ContainsFunc(ops.projects, func(p string) bool { return p == "proj_test" }))
}

// A generation list's limit is clamped by the route, so the tool passes any
// whole number on, clamped to an int's range: one beyond 64 bits is not a
// decoding error. A fraction is refused by the tool's schema.
func TestListGenerationsLimitBeyondInt(t *testing.T) {
	ops := newFakeOps()
	session, _ := setup(t, ops)
	for _, limit := range []float64{1e30, -1e30, 500} {
		res := call(t, session, "list_generations", map[string]any{"limit": limit})
		require.False(t, res.IsError, text(res))
	}
	require.Len(t, ops.lists, 3)
	assert.Equal(t, math.MaxInt32, ops.lists[0].Limit)
	assert.Equal(t, math.MinInt32, ops.lists[1].Limit)
	assert.Equal(t, 500, ops.lists[2].Limit)

	res := call(t, session, "list_generations", map[string]any{"limit": 1.5})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "limit")
	assert.Len(t, ops.lists, 3, "a refused call reaches no route")
}

func TestResponsesAreServerSentEvents(t *testing.T) {
	_, endpoint := setup(t, newFakeOps())

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(init))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()

	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(body), "data: ")
	assert.Contains(t, string(body), `"serverInfo":{"name":"mediagen"`)
}

func TestOnlyPostIsAllowed(t *testing.T) {
	_, endpoint := setup(t, newFakeOps())

	for _, method := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		t.Run(method, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), method, endpoint, nil)
			require.NoError(t, err)
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()

			assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
			assert.Equal(t, http.MethodPost, resp.Header.Get("Allow"))
			var e api.Error
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
			assert.Equal(t, api.ErrorCodeMethodNotAllowed, e.Error.Code)
		})
	}
}

func TestOtherTools(t *testing.T) {
	ops := newFakeOps()
	session, _ := setup(t, ops)

	res := call(t, session, "get_pricing", nil)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, 2.0, structured[api.PricingTable](t, res).Prices["image/ad"].Price)

	res = call(t, session, "get_template_prompt", map[string]any{"previewId": "pv_1"})
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "pv_1", structured[api.TemplatePreviewEnvelope](t, res).Preview.ID)
	assert.Contains(t, text(res), "digital glitch sweep")

	res = call(t, session, "create_upload_url", map[string]any{"bytes": 1234, "contentType": "image/png"})
	require.False(t, res.IsError, text(res))
	up := structured[mediagen.UploadURL](t, res)
	assert.Equal(t, "file_1", up.File.ID)
	assert.Equal(t, mediagen.UploadHeaders{ContentType: "image/png", ContentLength: 1234}, up.Headers)
	assert.Contains(t, text(res), "Content-Length: 1234")

	res = call(t, session, "create_upload_url", map[string]any{"bytes": 10, "contentType": "application/x-msdownload"})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "415 unsupported_media_type")

	res = call(t, session, "list_generations", map[string]any{"limit": 1})
	require.False(t, res.IsError, text(res))
	page := structured[api.GenerationList](t, res)
	require.Len(t, page.Generations, 1)
	require.NotNil(t, page.NextCursor)
	assert.Contains(t, text(res), "cursor c2")

	created := call(t, session, "generate_ad", map[string]any{"image": "f", "prompt": "p"})
	id := structured[api.GenerationEnvelope](t, created).Generation.ID
	res = call(t, session, "delete_generation", map[string]any{"id": id})
	require.False(t, res.IsError, text(res))
	assert.True(t, structured[api.Success](t, res).Success)
	res = call(t, session, "delete_generation", map[string]any{"id": id})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "404 not_found")

	for _, p := range ops.projects {
		assert.Equal(t, "proj_test", p)
	}
}

// answerError is an error that is also a response object, as a server may
// return its error answers.
type answerError struct{ status int }

func (e answerError) Error() string { return fmt.Sprintf("answer %d", e.status) }

func (e answerError) VisitCreateGenerationResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	return json.NewEncoder(w).Encode(api.Error{Error: api.ErrorDetail{
		Code: api.ErrorCodePermissionRequired, Message: "confirm permission",
	}})
}

func TestErrorThatIsAnAnswer(t *testing.T) {
	ops := newFakeOps()
	ops.fail = fmt.Errorf("wrapped: %w", answerError{status: http.StatusForbidden})
	session, _ := setup(t, ops)

	res := call(t, session, "generate_self_portrait", map[string]any{"image": "f", "prompt": "p"})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "HTTP 403 permission_required: confirm permission")
	assert.Equal(t, api.ErrorCodePermissionRequired, structured[api.Error](t, res).Error.Code)
}

func TestExactUSD(t *testing.T) {
	for v, want := range map[float64]string{0: "0.00 USD", 0.2: "0.20 USD", 2: "2.00 USD", 0.0375: "0.0375 USD", 17.25: "17.25 USD"} {
		assert.Equal(t, want, exactUSD(v), "%v", v)
	}
}

// Every named tool's input schema is its feature's argument schema from the
// contract, and its arguments are checked as the route checks them.
func TestToolSchemasComeFromTheFeatureTable(t *testing.T) {
	ops := newFakeOps()
	session, _ := setup(t, ops)
	res, err := session.ListTools(t.Context(), nil)
	require.NoError(t, err)
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	for _, f := range feature.All {
		if f.Tool == "" {
			continue
		}
		tool, ok := byName[f.Tool]
		require.True(t, ok, f.Tool)
		assert.Equal(t, f.ToolDescription, tool.Description)
		schema := tool.InputSchema.(map[string]any)
		assert.Equal(t, false, schema["additionalProperties"], f.Tool)
		props := schema["properties"].(map[string]any)
		assert.Len(t, props, len(f.Args)+1, "the arguments and webhookUrl")
		var required []any
		for _, a := range f.Args {
			p := props[a.Name].(map[string]any)
			assert.Equal(t, a.Type, p["type"], "%s %s", f.Tool, a.Name)
			assert.Equal(t, a.Description, p["description"], "%s %s", f.Tool, a.Name)
			if a.Required {
				required = append(required, a.Name)
			}
		}
		assert.ElementsMatch(t, required, schema["required"], f.Tool)
	}
	duration := byName["generate_logo_reveal"].InputSchema.(map[string]any)["properties"].(map[string]any)["duration"].(map[string]any)
	assert.Equal(t, []any{3.0, 10.0, 5.0}, []any{duration["minimum"], duration["maximum"], duration["default"]})

	bad := call(t, session, "generate_logo_reveal", map[string]any{"image": "f", "prompt": "p", "duration": 11})
	require.True(t, bad.IsError)
	want := feature.Check("video/logo-reveal", map[string]any{"image": "f", "prompt": "p", "duration": 11.0})
	require.Error(t, want)
	assert.Equal(t, want.Error(), structured[api.Error](t, bad).Error.Message, "the route's message")
	assert.Contains(t, text(bad), "HTTP 400 invalid_argument")
	unknown := call(t, session, "generate_voiceover", map[string]any{"voiceId": "v", "script": "s", "speed": 2})
	require.True(t, unknown.IsError)
	assert.Contains(t, text(unknown), "args.speed is not an argument of audio/voiceover")
	assert.Empty(t, ops.created, "nothing is submitted")
}
