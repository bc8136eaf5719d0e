package client

import (
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
)

// TestHandBuiltRequestsMatchGenerated holds the hot path's request builders
// to the generated ones: same method, URL and body, under a base URL with
// and without a path prefix, for ids and parameters that need escaping. The
// one difference allowed: a list parameter left at its zero value is left
// out, where the generated builder sends it empty (the service reads both
// as its default).
func TestHandBuiltRequestsMatchGenerated(t *testing.T) {
	for _, base := range []string{"https://api.example.com", "http://127.0.0.1:8080/prefix/v3/"} {
		c, err := New("mg_key_123456", WithBaseURL(base))
		require.NoError(t, err)
		server := c.server

		for _, id := range []string{"gen_01HZX", "a/b c", "ü?#%", ".."} {
			want, err := api.NewGetGenerationRequest(server, id)
			require.NoError(t, err)
			got := c.getGenerationRequest(id)
			if id == ".." {
				// The generated builder resolves the dot segment away and
				// asks for the list; the hand-built one asks for the id.
				assert.True(t, strings.HasSuffix(got.URL.Path, "/v3/generations/.."), got.URL.Path)
				continue
			}
			assert.Equal(t, want.Method, got.Method)
			assert.Equal(t, want.URL.String(), got.URL.String(), "GET %q", id)
			assert.Equal(t, want.Host, got.URL.Host)
		}

		for _, p := range []ListParams{
			{},
			{Limit: 24},
			{Feature: mediagen.FeatureVideoLogoReveal, Limit: 100, Cursor: "a b/c+d=&e"},
			{Feature: "logo-reveal", Cursor: "x"},
		} {
			want, err := api.NewListGenerationsRequest(server, &api.ListGenerationsParams{Feature: string(p.Feature), Limit: p.Limit, Cursor: p.Cursor})
			require.NoError(t, err)
			got := c.listGenerationsRequest(p)
			assert.Equal(t, want.Method, got.Method)
			assert.Equal(t, want.URL.EscapedPath(), got.URL.EscapedPath())
			wantQuery := want.URL.Query()
			for k, vs := range wantQuery {
				if vs[0] == "" || vs[0] == "0" {
					delete(wantQuery, k)
				}
			}
			assert.Equal(t, wantQuery, got.URL.Query(), "list %+v", p)
		}

		for _, tc := range []struct {
			args    Args
			webhook string
		}{
			{ImageGenerationArgs{Prompt: `a "lighthouse" <at> dusk & after`, AspectRatio: Aspect16x9}, ""},
			{RawArgs{FeatureName: "image/généràtion\"<&>\n", Values: map[string]any{"prompt": "p"}}, "https://example.com/h?a=1&b=<2>\u2028"},
			{LogoRevealArgs{Image: "file_1", Prompt: "sparks", Duration: 7}, "https://example.com/hook"},
			{RawArgs{FeatureName: "logo-reveal", Values: map[string]any{"image": "file_2", "prompt": "ü", "n": 1e21}}, ""},
		} {
			a, body, err := encodeCreate(tc.args, tc.webhook) // as sent; the check before sending is tested in check_test.go
			require.NoError(t, err)
			want, err := api.NewCreateGenerationRequest(server, api.CreateGenerationRequest{Feature: mediagen.Feature(a.feature), Args: a.params(), WebhookURL: tc.webhook})
			require.NoError(t, err)
			got := c.createGenerationRequest(body)
			assert.Equal(t, want.Method, got.Method)
			assert.Equal(t, want.URL.String(), got.URL.String())
			assert.Equal(t, want.Header.Get("Content-Type"), got.Header.Get("Content-Type"))
			wantBody, err := io.ReadAll(want.Body)
			require.NoError(t, err)
			assert.JSONEq(t, string(wantBody), string(got.Body))
		}
	}
}

// TestAppendJSONString holds the create body's string encoding to
// encoding/json's.
func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "image/generation", `a"b`, `a\b`, "<&>", "\x00\x1f", "é", "\u2028\u2029", "\xff"} {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(appendJSONString(nil, s)), "%q", s)
	}
}

// TestEncodeCreateMatchesMarshal: the arguments a create sends are
// json.Marshal's, each call's its own though the encoder is reused.
func TestEncodeCreateMatchesMarshal(t *testing.T) {
	all := []Args{
		ImageGenerationArgs{Prompt: `a "lighthouse" <at> dusk & after`, AspectRatio: Aspect16x9},
		RawArgs{FeatureName: "logo-reveal", Values: map[string]any{"image": "file_2", "prompt": "ü\u2028", "n": 1e21, "feature": map[string]any{"z": []any{1, "x"}}}},
		&LogoRevealArgs{Image: "file_1", Prompt: "sparks", Duration: 7},
		RawArgs{FeatureName: "image-generation"},
	}
	var raws, bodies [][]byte
	for _, args := range all {
		a, body, err := encodeCreate(args, "https://example.com/h")
		require.NoError(t, err)
		raws, bodies = append(raws, a.raw), append(bodies, body)
	}
	for i, args := range all {
		want, err := json.Marshal(args)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(raws[i]))
		assert.Equal(t, `{"args":`+string(want)+`,"feature":"`+string(args.Feature())+`","webhookUrl":"https://example.com/h"}`, string(bodies[i]))
	}
	_, _, err := encodeCreate(RawArgs{FeatureName: "x", Values: map[string]any{"n": math.NaN()}}, "")
	assert.ErrorIs(t, err, ErrInvalidArgument)
}
