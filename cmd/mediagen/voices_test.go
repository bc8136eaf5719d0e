package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// TestUploadCommand uploads files and prints their ids; bad files fail
// before anything is sent.
func TestUploadCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mediagen serve")
	}
	srv := startServe(t)
	dir := t.TempDir()
	logo(t, dir)
	writeFile(t, dir, "notes.txt", []byte("a kite over the sea\n"))
	writeFile(t, dir, "empty.txt", nil)
	writeFile(t, dir, "blob.bin", []byte{0, 1, 2, 3, 0xff, 0xfe, 0, 0, 9})

	r := run(t, dir, srv.env(), "", "upload", "logo.png", "notes.txt")
	requireOK(t, r)
	assert.Regexp(t, `(?m)^FILE\s+ID\s+BYTES$`, r.stdout)
	assert.Regexp(t, `(?m)^logo\.png\s+file_\w+\s+\d+$`, r.stdout)
	assert.Regexp(t, `(?m)^notes\.txt\s+file_\w+\s+20$`, r.stdout)

	r = run(t, dir, srv.env(), "", "upload", "--json", "logo.png", "notes.txt")
	requireOK(t, r)
	rows := jsonLines(t, r.stdout)
	require.Len(t, rows, 2)
	assert.Equal(t, "notes.txt", rows[1]["path"])
	assert.Equal(t, 20.0, rows[1]["size"])
	assert.True(t, strings.HasPrefix(rows[0]["id"].(string), "file_"))

	requireFailure(t, run(t, dir, srv.env(), "", "upload", "empty.txt"), exitUsage, "empty")
	requireFailure(t, run(t, dir, srv.env(), "", "upload", "blob.bin"), exitUsage, "not accepted")
}

// TestVoicesCommands lists, filters and stars catalog voices, and clones,
// waits for and deletes a voice of the project's own.
func TestVoicesCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mediagen serve and trains a voice")
	}
	srv := startServe(t)
	dir := t.TempDir()

	r := run(t, dir, srv.env(), "", "voices")
	requireOK(t, r)
	assert.Regexp(t, `(?m)^ID\s+SLUG\s+NAME\s+OWNER\s+LOCALE\s+TAGS\s+FAVORITE\s+STATUS$`, r.stdout)
	assert.Regexp(t, `(?m)^\S+\s+ava-warm-narrator\s+Ava\s+service\s+en-US\s+\S*female\S*\s+-\s+-$`, r.stdout)

	r = run(t, dir, srv.env(), "", "voices", "--json", "--tag", "female", "--tag", "narration", "--locale", "en-US")
	requireOK(t, r)
	voices := decode[[]map[string]any](t, r.stdout)
	require.NotEmpty(t, voices)
	for _, v := range voices {
		assert.Equal(t, "en-US", v["locale"])
		assert.Contains(t, v["tags"], "female")
		assert.Contains(t, v["tags"], "narration")
	}

	r = run(t, dir, srv.env(), "", "voices", "--favorites", "--json")
	requireOK(t, r)
	assert.Equal(t, "[]\n", r.stdout, "none starred yet")
	r = run(t, dir, srv.env(), "", "voices", "favorite", "ava-warm-narrator")
	requireOK(t, r)
	assert.Equal(t, "starred ava-warm-narrator\n", r.stdout)
	r = run(t, dir, srv.env(), "", "voices", "--favorites")
	requireOK(t, r)
	assert.Regexp(t, `(?m)^\S+\s+ava-warm-narrator\s+Ava\s+service\s+en-US\s+\S+\s+yes\s+-$`, r.stdout)
	r = run(t, dir, srv.env(), "", "voices", "unfavorite", "ava-warm-narrator", "--json")
	requireOK(t, r)
	assert.Equal(t, `{"favorite":false,"id":"ava-warm-narrator"}`+"\n", r.stdout)

	// A clone: charged 1 USD, trained, then deleted.
	writeFile(t, dir, "sample.wav", media.WAV(12*time.Second, "my voice"))
	r = run(t, dir, srv.env(), "", "voices", "clone", "My voice", "--audio", "sample.wav", "--description", "calm", "--wait", "--json")
	requireOK(t, r)
	clone := decode[map[string]any](t, r.stdout)
	assert.Equal(t, "done", clone["status"])
	assert.Equal(t, "project", clone["owner"])
	assert.Equal(t, "My voice", clone["name"])
	assert.Equal(t, 99.0, srv.balance(t))
	r = run(t, dir, srv.env(), "", "voices", "--owner", "project")
	requireOK(t, r)
	assert.Regexp(t, `(?m)^`+clone["id"].(string)+`\s+-\s+My voice\s+project\s+-\s+-\s+-\s+done$`, r.stdout)
	r = run(t, dir, srv.env(), "", "voices", "delete", clone["id"].(string))
	requireOK(t, r)
	assert.Equal(t, "deleted "+clone["id"].(string)+"\n", r.stdout)

	// A sample too short is refused before any charge.
	writeFile(t, dir, "short.wav", media.WAV(2*time.Second, "short"))
	r = run(t, dir, srv.env(), "", "voices", "clone", "Short", "--audio", "short.wav")
	requireFailure(t, r, exitUsage, "too short")
	assert.Equal(t, 99.0, srv.balance(t))
}

// TestTemplatesCommands lists templates and resolves a preview's prompt.
func TestTemplatesCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mediagen serve")
	}
	srv := startServe(t)
	dir := t.TempDir()

	r := run(t, dir, srv.env(), "", "templates", "--feature", "logo-reveal", "--category", "motion", "--limit", "2")
	requireOK(t, r)
	assert.Regexp(t, `(?m)^TEMPLATE\s+TITLE\s+CATEGORY\s+FEATURE\s+PREVIEW\s+GENDER$`, r.stdout)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3, "a header and two templates of one preview each:\n%s", r.stdout)
	preview := strings.Fields(lines[1])[len(strings.Fields(lines[1]))-2]

	r = run(t, dir, srv.env(), "", "templates", "--feature", "video/logo-reveal", "--json")
	requireOK(t, r)
	templates := decode[[]map[string]any](t, r.stdout)
	require.NotEmpty(t, templates)
	for _, tpl := range templates {
		assert.Equal(t, "video/logo-reveal", tpl["feature"])
	}

	r = run(t, dir, srv.env(), "", "templates", "prompt", preview)
	requireOK(t, r)
	prompt := strings.TrimSuffix(r.stdout, "\n")
	assert.NotEmpty(t, prompt)
	assert.NotContains(t, prompt, "\n", "the prompt alone, for $(...)")
	r = run(t, dir, srv.env(), "", "templates", "prompt", preview, "--json")
	requireOK(t, r)
	assert.Equal(t, prompt, decode[map[string]any](t, r.stdout)["prompt"])
}
