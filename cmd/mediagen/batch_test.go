package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBatch runs a file of generations within a budget, refuses one over
// it without charging, names a malformed line, and resumes on a second run
// without charging twice.
func TestBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mediagen serve")
	}
	srv := startServe(t)
	dir := t.TempDir()
	var lines []string
	for i := range 5 {
		lines = append(lines, fmt.Sprintf(`{"key": "order-%d", "feature": "image/generation", "args": {"prompt": "kite %d"}}`, i, i))
	}
	lines = append(lines, `{"feature": "image-generation", "args": {"prompt": "no key: the line's hash is its key"}}`)
	file := writeFile(t, dir, "orders.jsonl", []byte(strings.Join(lines, "\n")+"\n"))

	r := run(t, dir, srv.env(), "", "batch", file, "--budget", "0.1")
	requireFailure(t, r, exitBalance, "budget")
	assert.Equal(t, 100.0, srv.balance(t), "nothing charged")

	r = run(t, dir, srv.env(), "", "batch", file, "--budget", "1", "--concurrency", "3", "--save", filepath.Join(dir, "out"))
	requireOK(t, r)
	assert.Contains(t, r.stdout, "6 done, 0 failed, 0 skipped")
	assert.InDelta(t, 100-6*0.04, srv.balance(t), 1e-9)
	saved, err := filepath.Glob(filepath.Join(dir, "out", "*.png"))
	require.NoError(t, err)
	assert.Len(t, saved, 6)
	_, err = os.Stat(file + ".journal.db")
	require.NoError(t, err, "the journal beside the file")

	// Again: every line's key is recorded; nothing is charged twice.
	r = run(t, dir, srv.env(), "", "batch", file, "--json")
	requireOK(t, r)
	items := jsonLines(t, r.stdout)
	require.Len(t, items, 6)
	for _, it := range items {
		assert.NotEmpty(t, it["generation"], "%v", it)
	}
	assert.InDelta(t, 100-6*0.04, srv.balance(t), 1e-9, "the second run charged nothing")

	bad := writeFile(t, dir, "bad.jsonl", []byte(lines[0]+"\n{\"feature\": \"image/generation\", \"args\": \n"))
	r = run(t, dir, srv.env(), "", "batch", bad)
	requireFailure(t, r, exitUsage, "bad.jsonl:2")
	unknown := writeFile(t, dir, "unknown.jsonl", []byte(`{"key": "k", "feature": "video/nope", "args": {}}`+"\n"))
	r = run(t, dir, srv.env(), "", "batch", unknown)
	requireFailure(t, r, exitUsage, "unknown.jsonl:1")
	assert.InDelta(t, 100-6*0.04, srv.balance(t), 1e-9, "bad files charge nothing")
}

// Ctrl-C stops the run, says how to resume, and the same command again
// finishes it without charging twice.
func TestBatchInterruptedAndResumed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mediagen serve with renders of real length")
	}
	srv := startServe(t, "--render-scale", "0.2")
	dir := t.TempDir()
	var lines []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf(`{"key": "job-%d", "feature": "image/generation", "args": {"prompt": "heron %d"}}`, i, i))
	}
	file := writeFile(t, dir, "jobs.jsonl", []byte(strings.Join(lines, "\n")+"\n"))

	cmd := command(t, dir, srv.env(), "batch", file, "--concurrency", "2")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	time.Sleep(700 * time.Millisecond) // sending, or waiting for renders of 1.6 s
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", stderr.String())
	assert.Equal(t, exitInterrupted, ee.ExitCode(), "%s", stderr.String())
	assert.Contains(t, stderr.String(), "run the same command again to resume")

	r := run(t, dir, srv.env(), "", "batch", file)
	requireOK(t, r)
	assert.Contains(t, r.stdout, "20 done")
	assert.InDelta(t, 100-20*0.04, srv.balance(t), 1e-9, "each line charged once across both runs")
}

// TestBatchLineTooLong names a line over the limit by its number and
// length, with the exit code of any malformed line; nothing is sent.
func TestBatchLineTooLong(t *testing.T) {
	dir := t.TempDir()
	long := `{"key": "k3", "feature": "image/generation", "args": {"prompt": "` + strings.Repeat("a", 3*maxBatchLine) + `"}}`
	file := writeFile(t, dir, "big.jsonl", []byte(strings.Join([]string{
		`{"key": "k1", "feature": "image/generation", "args": {"prompt": "a kite"}}`,
		``,
		long,
		`{"key": "k4", "feature": "image/generation", "args": {"prompt": "a kite"}}`,
	}, "\n")+"\n"))
	r := run(t, dir, nil, "", "batch", file)
	requireFailure(t, r, exitUsage, fmt.Sprintf("big.jsonl: line 3 is %d bytes, over the limit of %d bytes", len(long), maxBatchLine))
	assert.NotContains(t, r.stderr, "token too long")
}
