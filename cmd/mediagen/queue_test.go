package main

import (
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/pgtest"
)

// TestBatchQueue adds a file to a River queue on PostgreSQL, twice without
// duplicates, and two worker processes finish it, one of them interrupted
// and started again: every line done once, charged once.
func TestBatchQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mediagen serve and PostgreSQL")
	}
	dsn := pgtest.DSN(t)
	srv := startServe(t)
	dir := t.TempDir()
	const n = 12
	var lines []string
	for i := range n {
		lines = append(lines, fmt.Sprintf(`{"key": "order-%d", "feature": "image/generation", "args": {"prompt": "kite %d"}}`, i, i))
	}
	file := writeFile(t, dir, "orders.jsonl", []byte(strings.Join(lines, "\n")+"\n"))
	out := filepath.Join(dir, "out")

	r := run(t, dir, srv.env(), "", "batch", file, "--queue", dsn, "--save", out, "--detach")
	requireOK(t, r)
	assert.Contains(t, r.stdout, fmt.Sprintf("%d jobs added, 0 already queued", n))
	r = run(t, dir, srv.env(), "", "batch", file, "--queue", dsn, "--save", out, "--detach")
	requireOK(t, r)
	assert.Contains(t, r.stdout, fmt.Sprintf("0 jobs added, %d already queued", n))

	startWorker := func(stdout io.Writer, args ...string) *exec.Cmd {
		cmd := command(t, dir, srv.env(), append([]string{"worker", "--queue", dsn, "--concurrency", "2"}, args...)...)
		cmd.Stdout = stdout
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	var firstOut strings.Builder
	first := startWorker(&firstOut, "--json")
	startWorker(nil)
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, first.Process.Signal(os.Interrupt)) // Ctrl-C
	require.NoError(t, first.Wait())
	counts := decode[map[string]int](t, firstOut.String()) // --json: the counts it stopped at
	assert.Equal(t, n, counts["queued"]+counts["rendering"]+counts["done"], firstOut.String())
	startWorker(nil)

	r = run(t, dir, srv.env(), "", "batch", file, "--queue", dsn)
	requireOK(t, r)
	assert.Contains(t, r.stdout, fmt.Sprintf("0 queued, 0 rendering, %d done, 0 failed", n))
	// --json: JSON for scripts, as every other command prints.
	r = run(t, dir, srv.env(), "", "batch", file, "--queue", dsn, "--json")
	requireOK(t, r)
	assert.JSONEq(t, fmt.Sprintf(`{"added": 0, "alreadyQueued": %d, "queued": 0, "rendering": 0, "done": %d, "failed": 0}`, n, n), r.stdout)
	r = run(t, dir, srv.env(), "", "batch", file, "--queue", dsn, "--json", "--detach")
	requireOK(t, r)
	assert.JSONEq(t, fmt.Sprintf(`{"added": 0, "alreadyQueued": %d}`, n), r.stdout)
	saved, err := filepath.Glob(filepath.Join(out, "*.png"))
	require.NoError(t, err)
	assert.Len(t, saved, n)
	assert.InDelta(t, 100-n*0.04, srv.balance(t), 1e-9, "each line charged once")
}

// unreadableQueue makes a queue in dir whose counts cannot be read: the
// store's table without the column its counts join on.
func unreadableQueue(t *testing.T, dir string) string {
	path := filepath.Join(dir, "queue.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE mediagen_river_generations (id text PRIMARY KEY)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	return path
}

// A queue whose counts cannot be read is not taken for an empty one:
// following it fails instead of exiting 0 as if every job were done.
func TestBatchQueueUnreadableIsNoSuccess(t *testing.T) {
	dir := t.TempDir()
	path := unreadableQueue(t, dir)
	file := writeFile(t, dir, "orders.jsonl", []byte(`{"key": "k", "feature": "image/generation", "args": {"prompt": "a kite"}}`+"\n"))
	r := run(t, dir, []string{"MEDIAGEN_BASE_URL=http://127.0.0.1:1", "MEDIAGEN_API_KEY=k"}, "", "batch", file, "--queue", "sqlite:"+path)
	assert.Equal(t, exitOther, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "job_id")
	assert.NotContains(t, r.stdout, "0 queued")
}

// A file refused for a bad line changes nothing in the queue, not even its
// budget.
func TestBatchQueueRefusedFileSetsNoBudget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "queue.db")
	long := strings.Repeat("k", 300)
	file := writeFile(t, dir, "orders.jsonl", []byte(`{"key": "`+long+`", "feature": "image/generation", "args": {"prompt": "a kite"}}`+"\n"))
	r := run(t, dir, nil, "", "batch", file, "--queue", "sqlite:"+path, "--budget", "5", "--detach")
	requireFailure(t, r, exitUsage, "key of 300 bytes")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM mediagen_river_budgets`).Scan(&n))
	assert.Zero(t, n, "no budget set")
}

// A worker stopped on a queue whose counts cannot be read says so on
// stderr and fails: its --json stdout had the error's text, exit 0.
func TestWorkerUnreadableCountsAreNoOutput(t *testing.T) {
	dir := t.TempDir()
	path := unreadableQueue(t, dir)
	cmd := command(t, dir, []string{"MEDIAGEN_BASE_URL=http://127.0.0.1:1", "MEDIAGEN_API_KEY=k"}, "worker", "--queue", "sqlite:"+path, "--json")
	var stdout strings.Builder
	cmd.Stdout = &stdout
	code, stderr := interrupt(t, cmd, time.Second)
	assert.Equal(t, exitOther, code, "stdout: %s\nstderr: %s", stdout.String(), stderr)
	assert.Empty(t, stdout.String(), "no error text among the JSON")
	assert.Contains(t, stderr, "job_id")
}
