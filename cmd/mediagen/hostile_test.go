package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// red is a terminal escape sequence: printed raw, it turns the rest of the
// screen red; other sequences retitle the window or worse.
const red = "\x1b[31m"

// fakeService answers the calls of the tests that use it with what a hostile
// or broken service might send, and returns the environment to reach it.
func fakeService(t *testing.T) []string {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	reply := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		require.NoError(t, json.NewEncoder(w).Encode(v))
	}
	generation := func(id string) map[string]any {
		g := map[string]any{"id": id, "projectId": "prj_1", "feature": "image/generation", "kind": "image", "status": "done",
			"params": map[string]any{}, "balanceUsed": 0.04, "requestDate": "2025-11-21T10:00:00Z",
			"output": map[string]any{"image": srv.URL + "/asset?id=" + url.QueryEscape(id), "mime": "image/png"}}
		if id == "gen_evil" {
			g["id"], g["feature"], g["status"], g["error"] = "gen_evil"+red, "image/generation"+red, "error", "failed"+red+"\x07 in red"
			delete(g, "output")
		}
		return g
	}
	mux.HandleFunc("GET /v3/generations/{id...}", func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/v3/generations/")
		if id == "gen_echo_gone" { // the key echoed, every character escaped
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"code":"not_found","message":"no generation for \u006d\u0067_test_key_1"}}`)
			return
		}
		if id == "gen_echo" {
			g := generation(id)
			g["error"], g["params"] = "your key: mg_test_key_1", map[string]any{"prompt": "mg_test_key_1"}
			reply(w, http.StatusOK, map[string]any{"generation": g})
			return
		}
		if id == "gen_gone" {
			reply(w, http.StatusNotFound, map[string]any{"error": map[string]any{"code": "not_found", "message": "no such generation" + red + "\x1b]0;owned\x07"}})
			return
		}
		reply(w, http.StatusOK, map[string]any{"generation": generation(id)})
	})
	mux.HandleFunc("GET /v3/generations", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, map[string]any{"generations": []any{generation("gen_evil")}, "nextCursor": nil})
	})
	mux.HandleFunc("GET /asset", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("output of " + r.URL.Query().Get("id")))
	})
	mux.HandleFunc("GET /v3/voices", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, map[string]any{"voices": []any{map[string]any{
			"id": "voc_1" + red, "name": "Ava" + red, "owner": "service", "status": "done", "locale": "en-US\r",
			"tags": []string{"warm" + red}, "description": "calm\x1b[2J"}}})
	})
	mux.HandleFunc("GET /v3/templates", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, map[string]any{"templates": []any{map[string]any{
			"id": "tpl_1", "title": "Neon" + red, "category": "motion\u009b31m", "feature": "image/self-portrait",
			"previews": []any{map[string]any{"id": "prv_1" + red, "gender": "any"}}}}})
	})
	mux.HandleFunc("GET /v3/templates/{id}", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, map[string]any{"preview": map[string]any{
			"id": "prv_1", "templateId": "tpl_1", "title": "Neon", "feature": "image/self-portrait", "gender": "any",
			"prompt": "a portrait in neon,\n" + red + "red light"}})
	})
	return []string{"MEDIAGEN_BASE_URL=" + srv.URL, "MEDIAGEN_API_KEY=mg_test_key_1"}
}

// TestServiceTextEscaped checks that what the service sends reaches the
// terminal with its control characters escaped, as Go quotes them, in
// tables, fields and error lines.
func TestServiceTextEscaped(t *testing.T) {
	env := fakeService(t)
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want []string // escaped, as shown
		code int
	}{
		{args: []string{"get", "gen_evil"}, want: []string{`gen_evil\x1b[31m`, `image/generation\x1b[31m`, `failed\x1b[31m\a in red`}, code: 0},
		{args: []string{"list"}, want: []string{`gen_evil\x1b[31m`}},
		{args: []string{"voices"}, want: []string{`voc_1\x1b[31m`, `Ava\x1b[31m`, `en-US\r`, `warm\x1b[31m`}},
		{args: []string{"templates"}, want: []string{`Neon\x1b[31m`, `motion\u009b31m`, `prv_1\x1b[31m`}},
		{args: []string{"get", "gen_gone"}, want: []string{`no such generation\x1b[31m\x1b]0;owned\a`}, code: exitNotFound},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := run(t, dir, env, "", tt.args...)
			require.Equal(t, tt.code, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			out := r.stdout + r.stderr
			for _, c := range []string{"\x1b", "\x07", "\x9b", "\r"} {
				assert.NotContains(t, out, c, "no raw control character")
			}
			for _, w := range tt.want {
				assert.Contains(t, out, w)
			}
		})
	}
}

// TestPromptExactInPipesEscapedOnTerminal: a prompt is printed for $(...),
// where it must be the exact string; a person reading it on a terminal
// sees it escaped.
func TestPromptExactInPipesEscapedOnTerminal(t *testing.T) {
	env := fakeService(t)
	dir := t.TempDir()
	r := run(t, dir, env, "", "templates", "prompt", "prv_1")
	requireOK(t, r)
	assert.Equal(t, "a portrait in neon,\n"+red+"red light\n", r.stdout)

	screen, code := runTerminal(t, dir, env, "templates", "prompt", "prv_1")
	require.Equal(t, 0, code, screen)
	assert.NotContains(t, screen, red)
	assert.Contains(t, screen, `a portrait in neon,`)
	assert.Contains(t, screen, `\x1b[31mred light`)
}

// TestKeyNeverPrinted: whatever the service echoes, as it is or escaped,
// in a field or an error, the command prints no API key, in tables or JSON.
func TestKeyNeverPrinted(t *testing.T) {
	env := fakeService(t)
	dir := t.TempDir()
	for _, args := range [][]string{{"get", "gen_echo"}, {"get", "gen_echo", "--json"}, {"get", "gen_echo_gone"}, {"get", "gen_echo_gone", "--json"}} {
		r := run(t, dir, env, "", args...)
		out := r.stdout + r.stderr
		assert.NotContains(t, out, "mg_test_key_1", "%v", args)
		assert.NotContains(t, out, `\u006d\u0067_test_key_1`, "%v", args)
		assert.Contains(t, out, "[", "%v: something was masked or withheld: %s", args, out)
	}
}
