package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runTerminal runs the built command with stdin, stdout and stderr on a
// pseudo-terminal, as a person runs it, and returns all it showed there.
func runTerminal(t *testing.T, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := command(t, dir, env, args...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	require.NoError(t, err)
	defer tty.Close()
	var screen bytes.Buffer
	_, _ = io.Copy(&screen, tty) // ends with an error (EIO) once the command closed its side
	err = cmd.Wait()
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return screen.String(), code
}

// TestProgressOnlyOnATerminal runs an upload and a generation with --wait
// under a pseudo-terminal, where a progress bar and a status line show,
// and through pipes, where stderr stays empty and stdout has only results.
func TestProgressOnlyOnATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mediagen serve")
	}
	srv := startServe(t, "--render-scale", "0.1") // an image renders in 0.8 s: the wait sees it pending
	dir := t.TempDir()
	writeFile(t, dir, "notes.txt", []byte(strings.Repeat("a kite over the sea\n", 100000))) // 2 MB

	screen, code := runTerminal(t, dir, srv.env(), "upload", "notes.txt")
	require.Equal(t, 0, code, screen)
	assert.Regexp(t, `notes\.txt\s+100% \|`, screen, "a progress bar")
	assert.Contains(t, screen, "2.0 MB", "bytes sent of the total")
	assert.Regexp(t, `(?m)^notes\.txt\s+file_\w+\s+2000000\r?$`, screen, "then the result")

	r := run(t, dir, srv.env(), "", "upload", "notes.txt")
	requireOK(t, r)
	assert.NotContains(t, r.stdout, "%")
	assert.Regexp(t, `^FILE\s+ID\s+BYTES\nnotes\.txt\s+file_\w+\s+2000000\n$`, r.stdout)

	screen, code = runTerminal(t, dir, srv.env(), "generate", "image/generation", "--arg", "prompt=a kite", "--wait")
	require.Equal(t, 0, code, screen)
	assert.Regexp(t, `gen_\w+ image/generation (pending|running)`, screen, "a status line while waiting")
	assert.Regexp(t, `\[\d+s\]`, screen, "with the time waited")
	assert.Regexp(t, `(?m)^STATUS\s+done\r?$`, screen)

	r = run(t, dir, srv.env(), "", "generate", "image/generation", "--arg", "prompt=a kite", "--wait")
	requireOK(t, r)
	assert.True(t, strings.HasPrefix(r.stdout, "ID "), r.stdout)
	assert.NotContains(t, r.stdout, "pending")
	assert.NotContains(t, r.stdout, "\r")
}
