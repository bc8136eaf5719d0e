package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client/clienttest"
)

// TestPriceAndEstimate reads the plan's prices and prices calls.
func TestPriceAndEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mediagen serve")
	}
	srv := startServe(t)
	dir := t.TempDir()

	r := run(t, dir, srv.env(), "", "price")
	requireOK(t, r)
	assert.Regexp(t, `(?m)^FEATURE\s+PRICE\s+PER\s+VARIANTS$`, r.stdout)
	assert.Regexp(t, `(?m)^video/logo-reveal\s+0\.1 USD\s+second of clip\s+resolution: 1080p ×1\.5, 720p ×1$`, r.stdout)
	assert.Regexp(t, `(?m)^audio/voice-clone\s+1 USD\s+call\s+-$`, r.stdout)

	r = run(t, dir, srv.env(), "", "price", "logo-reveal", "--json")
	requireOK(t, r)
	entry := decode[map[string]any](t, r.stdout)
	assert.Equal(t, "video/logo-reveal", entry["feature"], "a legacy spelling prices the canonical feature")
	assert.Equal(t, 0.1, entry["price"])
	assert.Equal(t, "second", entry["unit"])

	r = run(t, dir, srv.env(), "", "price", "--json")
	requireOK(t, r)
	all := decode[map[string]map[string]any](t, r.stdout)
	assert.Contains(t, all, "audio/voiceover")
	assert.Len(t, all, 10)

	r = run(t, dir, srv.env(), "", "estimate", "video/logo-reveal", "--arg", "duration=8", "--arg", "resolution=1080p")
	requireOK(t, r)
	assert.Equal(t, "video/logo-reveal: 0.1 USD/second × 1.5 (resolution=1080p) × 8 seconds = 1.2 USD\n", r.stdout)

	r = run(t, dir, srv.env(), "", "estimate", "audio/voiceover", "--arg", "script="+strings.Repeat("a", 1500), "--json")
	requireOK(t, r)
	est := decode[map[string]any](t, r.stdout)
	assert.Equal(t, 0.3, est["min"], "two started 1,000 characters")
	assert.Equal(t, est["min"], est["max"])
	assert.Contains(t, est["working"], "= 0.3 USD")

	r = run(t, dir, srv.env(), "", "estimate", "video/logo-reveal", "--arg", "duration=abc")
	requireFailure(t, r, exitUsage, "duration")
	assert.Equal(t, 100.0, srv.balance(t), "prices cost nothing")
}

// TestGenerateWaitSave is the tour of the README: a logo uploaded with
// --file, a logo reveal submitted, waited for and saved, then read back,
// listed, downloaded again and deleted.
func TestGenerateWaitSave(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mediagen serve and waits for a video")
	}
	srv := startServe(t)
	dir := t.TempDir()
	logo(t, dir)

	r := run(t, dir, srv.env(), "", "generate", "video/logo-reveal", "--file", "image=logo.png",
		"--arg", "prompt=sparks gather into a burst of light", "--arg", "duration=3", "--arg", "generateAudio=true",
		"--save", "renders", "--json")
	requireOK(t, r)
	g := decode[map[string]any](t, r.stdout)
	id := g["id"].(string)
	assert.Equal(t, "done", g["status"])
	assert.Equal(t, 0.3, g["balanceUsed"], "3 seconds at 0.1 USD")
	params := g["params"].(map[string]any)
	assert.True(t, strings.HasPrefix(params["image"].(string), "file_"), "the upload's id went as the image: %v", params)
	assert.Equal(t, 3.0, params["duration"], "a number parsed as JSON")
	assert.Equal(t, true, params["generateAudio"], "a boolean parsed as JSON")
	saved := g["saved"].(map[string]any)
	assert.Equal(t, filepath.Join("renders", id+".mp4"), saved["path"])
	for _, p := range []string{saved["path"].(string), saved["posterPath"].(string)} {
		st, err := os.Stat(filepath.Join(dir, p))
		require.NoError(t, err)
		assert.Positive(t, st.Size())
	}
	assert.InDelta(t, 99.7, srv.balance(t), 1e-9)

	// For people: name/value lines.
	r = run(t, dir, srv.env(), "", "get", id)
	requireOK(t, r)
	assert.Regexp(t, `(?m)^ID\s+`+id+`$`, r.stdout)
	assert.Regexp(t, `(?m)^STATUS\s+done$`, r.stdout)
	assert.Regexp(t, `(?m)^COST\s+0\.3 USD$`, r.stdout)
	assert.Regexp(t, `(?m)^OUTPUT\s+http://127\.0\.0\.1:\d+/`, r.stdout)

	// Without --wait it returns pending at once.
	r = run(t, dir, srv.env(), "", "generate", "image/generation", "--arg", "prompt=a kite", "--json")
	requireOK(t, r)
	img := decode[map[string]any](t, r.stdout)
	assert.Equal(t, "pending", img["status"])
	assert.Equal(t, "a kite", img["params"].(map[string]any)["prompt"])
	imgID := img["id"].(string)

	r = run(t, dir, srv.env(), "", "wait", imgID, "--save", "out")
	requireOK(t, r)
	assert.Regexp(t, `(?m)^SAVED\s+out/`+imgID+`\.png$`, r.stdout)

	// list: a table, and one JSON object per line, newest first.
	r = run(t, dir, srv.env(), "", "list")
	requireOK(t, r)
	assert.Regexp(t, `(?m)^ID\s+FEATURE\s+STATUS\s+COST\s+REQUESTED$`, r.stdout)
	assert.Regexp(t, `(?m)^`+id+`\s+video/logo-reveal\s+done\s+0\.3 USD\s+\d{4}-`, r.stdout)
	r = run(t, dir, srv.env(), "", "list", "--json")
	requireOK(t, r)
	rows := jsonLines(t, r.stdout)
	require.Len(t, rows, 2)
	assert.Equal(t, imgID, rows[0]["id"])
	assert.Equal(t, id, rows[1]["id"])
	r = run(t, dir, srv.env(), "", "list", "--json", "--limit", "1", "--all", "--feature", "logo-reveal")
	requireOK(t, r)
	rows = jsonLines(t, r.stdout)
	require.Len(t, rows, 1, "the feature filter takes either spelling")
	assert.Equal(t, id, rows[0]["id"])

	// download: the paths, one a line.
	r = run(t, dir, srv.env(), "", "download", id, "--dir", "again")
	requireOK(t, r)
	assert.Equal(t, filepath.Join("again", id+".mp4")+"\n"+filepath.Join("again", id+".poster.png")+"\n", r.stdout)

	// wait on several: one line each with --json.
	r = run(t, dir, srv.env(), "", "wait", id, imgID, "--json")
	requireOK(t, r)
	rows = jsonLines(t, r.stdout)
	require.Len(t, rows, 2)
	assert.Equal(t, id, rows[0]["id"])
	assert.Equal(t, "done", rows[1]["generation"].(map[string]any)["status"])

	// delete: gone afterwards; deleting again is a 404 among successes.
	r = run(t, dir, srv.env(), "", "delete", imgID)
	requireOK(t, r)
	assert.Equal(t, "deleted "+imgID+"\n", r.stdout)
	requireFailure(t, run(t, dir, srv.env(), "", "get", imgID), exitNotFound, "not found")
	r = run(t, dir, srv.env(), "", "delete", imgID, "--json")
	assert.Equal(t, exitNotFound, r.code)
	assert.Empty(t, r.stdout)

	// wait on an unknown id alongside a known one: a row each, exit 5.
	r = run(t, dir, srv.env(), "", "wait", id, "gen_nope")
	assert.Equal(t, exitNotFound, r.code, r.stderr)
	assert.Regexp(t, `(?m)^`+id+`\s+video/logo-reveal\s+done\s`, r.stdout)
	assert.Regexp(t, `(?m)^gen_nope\s+-\s+-\s+-\s+`, r.stdout)
}

// TestDownloadRefusesUnfinished: a pending generation has nothing to save.
func TestDownloadRefusesUnfinished(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mediagen serve")
	}
	srv := startServe(t, "--render-scale", "1") // the last flag wins: renders take seconds
	dir := t.TempDir()
	r := run(t, dir, srv.env(), "", "generate", "image/generation", "--arg", "prompt=a kite", "--json")
	requireOK(t, r)
	id := decode[map[string]any](t, r.stdout)["id"].(string)
	requireFailure(t, run(t, dir, srv.env(), "", "download", id), exitOther, "wait for it first: mediagen wait "+id)
	r = run(t, dir, srv.env(), "", "wait", id, "--max-wait", "1ms")
	assert.Equal(t, exitOther, r.code, "--max-wait passed: %s", r.stderr)
	assert.Contains(t, r.stderr, "maximum wait")
	// --max-wait on generate waits, as --save does, rather than being ignored.
	r = run(t, dir, srv.env(), "", "generate", "image/generation", "--arg", "prompt=a kite", "--max-wait", "1ms")
	assert.Equal(t, exitOther, r.code, "--max-wait passed: %s", r.stderr)
	assert.Contains(t, r.stderr, "maximum wait")

	// Ctrl-C during a wait: exit 130, and how to wait again.
	cmd := command(t, dir, srv.env(), "wait", id)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	time.Sleep(500 * time.Millisecond) // the first check is done, the wait sleeps
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err := cmd.Wait()
	require.Error(t, err)
	assert.Equal(t, exitInterrupted, cmd.ProcessState.ExitCode())
	assert.Equal(t, "mediagen: interrupted; "+id+" goes on at the service: mediagen wait "+id+"\n", stderr.String())
}

// Ctrl-C during a wait on several generations exits 130, even when one of
// them had already failed (which alone exits 1).
func TestWaitManyInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("renders of real length")
	}
	_, env := inProcess(t, clienttest.WithOutcome(func(f mediagen.Feature) clienttest.Outcome {
		if f == mediagen.FeatureImageGeneration {
			return clienttest.OutcomeError
		}
		return clienttest.OutcomeDone
	}))
	dir := t.TempDir()
	r := run(t, dir, env, "", "generate", "image/generation", "--arg", "prompt=a kite", "--wait", "--json")
	require.Equal(t, exitOther, r.code, r.stderr)
	failed := decode[map[string]any](t, r.stdout)["id"].(string)
	r = run(t, dir, env, "", "generate", "video/avatar", "--arg", "voiceId=ava-warm-narrator", "--arg", "script=a long script",
		"--arg", "permissionConfirmed=true", "--json")
	requireOK(t, r)
	pending := decode[map[string]any](t, r.stdout)["id"].(string)

	code, stderr := interrupt(t, command(t, dir, env, "wait", failed, pending), 500*time.Millisecond)
	assert.Equal(t, exitInterrupted, code, stderr)
}
