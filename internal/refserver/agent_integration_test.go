package refserver_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/refserver"
)

const agentKey = "key"

// keyTransport sends the API key the way the interface document asks: the
// key alone in Authorization, no Bearer prefix.
type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// startAgentServer runs a reference server and connects the MCP SDK's client
// to its agent endpoint.
func startAgentServer(t *testing.T) (*refserver.Server, string, *mcp.ClientSession) {
	t.Helper()
	srv := refserver.New(refserver.WithProject(agentKey, 100), refserver.WithRenderScale(0.01))
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)

	client := mcp.NewClient(&mcp.Implementation{Name: "integration", Version: "0.0.1"}, nil)
	session, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint:   ts.URL + "/v3/mcp",
		HTTPClient: &http.Client{Transport: keyTransport{key: agentKey}},
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = session.Close() })
	return srv, ts.URL, session
}

// uploadPNG uploads a small logo through the multipart route and returns its file id.
func uploadPNG(t *testing.T, baseURL string) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for x := 16; x < 48; x++ {
		for y := 16; y < 48; y++ {
			img.Set(x, y, color.RGBA{R: 200, G: 40, B: 40, A: 255})
		}
	}
	var pngBytes bytes.Buffer
	require.NoError(t, png.Encode(&pngBytes, img))

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="files"; filename="logo.png"`)
	h.Set("Content-Type", "image/png")
	part, err := mw.CreatePart(h)
	require.NoError(t, err)
	_, err = part.Write(pngBytes.Bytes())
	require.NoError(t, err)
	require.NoError(t, mw.Close())

	resp := do(t, http.MethodPost, baseURL+"/v3/files/upload", agentKey, mw.FormDataContentType(), &body)
	require.Equal(t, http.StatusOK, resp.status, string(resp.body))
	var files api.FileList
	require.NoError(t, json.Unmarshal(resp.body, &files))
	require.Len(t, files.Files, 1)
	return files.Files[0].ID
}

type httpAnswer struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, method, url, key, contentType string, body io.Reader) httpAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, body)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return httpAnswer{status: resp.StatusCode, header: resp.Header, body: b}
}

func callTool(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	return res
}

func toolText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func toolGeneration(t *testing.T, res *mcp.CallToolResult) mediagen.Generation {
	t.Helper()
	require.False(t, res.IsError, toolText(res))
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var env api.GenerationEnvelope
	require.NoError(t, json.Unmarshal(b, &env))
	require.NotEmpty(t, env.Generation.ID)
	return env.Generation
}

func TestAgentEndpointThroughSDKClient(t *testing.T) {
	srv, baseURL, session := startAgentServer(t)

	tools, err := session.ListTools(t.Context(), nil)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
		assert.NotNil(t, tool.InputSchema, tool.Name)
	}
	for _, name := range []string{
		"generate_ad", "generate_youtube_thumbnail", "generate_self_portrait", "generate_product_shot",
		"generate_avatar_video", "generate_logo_reveal", "generate_object_reveal", "generate_voiceover",
		"create_generation", "get_generation", "list_templates", "get_template_prompt", "get_pricing",
		"create_upload_url", "list_voices", "list_generations", "delete_generation",
	} {
		assert.True(t, names[name], "tool %s missing", name)
	}

	logo := uploadPNG(t, baseURL)
	args := map[string]any{"image": logo, "prompt": "sparks gather into the mark", "duration": 6, "resolution": "1080p"}

	// What the HTTP route charges for these arguments is the reference.
	before := srv.Balance(agentKey)
	reqBody, err := json.Marshal(map[string]any{"feature": "video/logo-reveal", "args": args})
	require.NoError(t, err)
	viaHTTP := do(t, http.MethodPost, baseURL+"/v3/generations", agentKey, "application/json", bytes.NewReader(reqBody))
	require.Equal(t, http.StatusOK, viaHTTP.status, string(viaHTTP.body))
	var httpEnv api.GenerationEnvelope
	require.NoError(t, json.Unmarshal(viaHTTP.body, &httpEnv))
	charge := before - srv.Balance(agentKey)
	require.Greater(t, charge, 0.0)
	assert.InDelta(t, httpEnv.Generation.BalanceUsed, charge, 1e-9)

	before = srv.Balance(agentKey)
	named := toolGeneration(t, callTool(t, session, "generate_logo_reveal", args))
	assert.InDelta(t, charge, before-srv.Balance(agentKey), 1e-9, "generate_logo_reveal charges what the route charges")
	assert.InDelta(t, charge, named.BalanceUsed, 1e-9)
	assert.Equal(t, mediagen.FeatureVideoLogoReveal, named.Feature)
	assert.Equal(t, mediagen.GenerationStatusPending, named.Status)
	assert.Equal(t, httpEnv.Generation.ProjectID, named.ProjectID, "the tool runs as the key's project")

	before = srv.Balance(agentKey)
	packed := toolGeneration(t, callTool(t, session, "create_generation", map[string]any{"feature": "video/logo-reveal", "args": args}))
	assert.InDelta(t, charge, before-srv.Balance(agentKey), 1e-9, "create_generation charges what the route charges")
	assert.InDelta(t, charge, packed.BalanceUsed, 1e-9)

	// Poll like an agent would until the render finishes.
	var got mediagen.Generation
	require.Eventually(t, func() bool {
		got = toolGeneration(t, callTool(t, session, "get_generation", map[string]any{"id": packed.ID}))
		return got.Status == mediagen.GenerationStatusDone
	}, 10*time.Second, 50*time.Millisecond)
	assert.Equal(t, packed.ID, got.ID)
	require.NotNil(t, got.Output)
	require.NotNil(t, got.Output.Video)

	viaGET := do(t, http.MethodGet, baseURL+"/v3/generations/"+packed.ID, agentKey, "", nil)
	require.Equal(t, http.StatusOK, viaGET.status, string(viaGET.body))
	var getEnv api.GenerationEnvelope
	require.NoError(t, json.Unmarshal(viaGET.body, &getEnv))
	assert.Equal(t, getEnv.Generation.ID, got.ID)
	assert.Equal(t, getEnv.Generation.Status, got.Status)
	assert.Equal(t, getEnv.Generation.Params, got.Params)

	// An invalid argument is refused like on the route: a tool error, nothing charged.
	before = srv.Balance(agentKey)
	bad := callTool(t, session, "generate_logo_reveal", map[string]any{"image": logo, "prompt": "x", "duration": 60})
	assert.True(t, bad.IsError)
	assert.Contains(t, toolText(bad), "400 invalid_argument")
	assert.InDelta(t, before, srv.Balance(agentKey), 1e-9)
}

func TestAgentEndpointHTTP(t *testing.T) {
	_, baseURL, _ := startAgentServer(t)
	endpoint := baseURL + "/v3/mcp"
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

	ok := do(t, http.MethodPost, endpoint, agentKey, "application/json", strings.NewReader(initialize))
	require.Equal(t, http.StatusOK, ok.status, string(ok.body))
	assert.Equal(t, "text/event-stream", ok.header.Get("Content-Type"))

	for _, key := range []string{"", "wrong", "Bearer " + agentKey} {
		unauthorized := do(t, http.MethodPost, endpoint, key, "application/json", strings.NewReader(initialize))
		assert.Equal(t, http.StatusUnauthorized, unauthorized.status, "key %q", key)
		var e api.Error
		require.NoError(t, json.Unmarshal(unauthorized.body, &e))
		assert.Equal(t, api.ErrorCodeUnauthorized, e.Error.Code)
	}

	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		notAllowed := do(t, method, endpoint, agentKey, "", nil)
		assert.Equal(t, http.StatusMethodNotAllowed, notAllowed.status, method)
		var e api.Error
		require.NoError(t, json.Unmarshal(notAllowed.body, &e), method)
		assert.Equal(t, api.ErrorCodeMethodNotAllowed, e.Error.Code, method)
	}
}
