package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
)

func TestResumeRunsOnTheReferenceServer(t *testing.T) {
	t.Setenv("MEDIAGEN_API_KEY", "")
	t.Setenv("MEDIAGEN_BASE_URL", "")
	dir := t.TempDir()
	*journalPath, *outputDir = filepath.Join(dir, "j.db"), filepath.Join(dir, "out")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, len(orders), strings.Count(out.String(), "submitted "), out.String())
	files, err := filepath.Glob(filepath.Join(*outputDir, "*.png"))
	require.NoError(t, err)
	assert.Len(t, files, len(orders))
}

// Run twice with no key, as a user tries it: the second run's in-process
// server is a new one, and the run does not fail on the first's journal.
func TestRunTwiceWithNoKey(t *testing.T) {
	t.Setenv("MEDIAGEN_API_KEY", "")
	t.Setenv("MEDIAGEN_BASE_URL", "")
	dir := t.TempDir()
	*journalPath, *outputDir = filepath.Join(dir, "j.db"), filepath.Join(dir, "out")
	require.NoError(t, run(context.Background(), io.Discard))
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out), "the second run")
	assert.Equal(t, len(orders), strings.Count(out.String(), "saved "), out.String())
}

// Killed with SIGKILL midway and run again against the reference server
// command: every order ends with one generation, none charged twice.
func TestKilledMidwayAndRunAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example and the reference server command")
	}
	bin := t.TempDir()
	build(t, filepath.Join(bin, "refserver"), "../../internal/cmd/refserver")
	build(t, filepath.Join(bin, "resume"), ".")
	srv := exec.Command(filepath.Join(bin, "refserver"), "-addr", "127.0.0.1:0", "-render-scale", "0.01")
	stdout, err := srv.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	var env []string
	sc := bufio.NewScanner(stdout)
	for len(env) < 3 && sc.Scan() {
		env = append(env, sc.Text())
	}
	go func() {
		for sc.Scan() {
		}
	}()

	work := t.TempDir()
	args := []string{"-journal", filepath.Join(work, "j.db"), "-out", filepath.Join(work, "out")}

	// The first run is killed once it has submitted two orders.
	first := exec.Command(filepath.Join(bin, "resume"), args...)
	first.Env = append(os.Environ(), env...)
	pipe, err := first.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, first.Start())
	lines := bufio.NewScanner(pipe)
	for submitted := 0; submitted < 2 && lines.Scan(); {
		if strings.HasPrefix(lines.Text(), "submitted ") {
			submitted++
		}
	}
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()

	second := exec.Command(filepath.Join(bin, "resume"), args...)
	second.Env = append(os.Environ(), env...)
	out, err := second.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "resuming order-1001", "what the killed run sent is picked up")
	assert.Equal(t, len(orders), strings.Count(string(out), "saved "), "%s", out)

	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	c, err := client.New(vars["MEDIAGEN_API_KEY"], client.WithBaseURL(vars["MEDIAGEN_BASE_URL"]))
	require.NoError(t, err)
	n := 0
	for _, err := range c.Generations(context.Background(), client.ListParams{}) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, len(orders), n, "one generation per order: none charged twice")
}

func build(t *testing.T, out, pkg string) {
	t.Helper()
	b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput()
	require.NoError(t, err, "%s", b)
}
