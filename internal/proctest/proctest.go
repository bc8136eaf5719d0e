// Package proctest starts a command for a test, such as the reference
// server command, and reads the KEY=VALUE lines it prints before it serves.
package proctest

import (
	"bufio"
	"os"
	"os/exec"
	"testing"
)

// Start runs bin with args, its stderr on the test's, reads the first
// lines lines it prints on stdout (the reference server prints its
// variables as KEY=VALUE), and kills it when the test ends. It fails the
// test when the command does not start or prints fewer lines.
func Start(tb testing.TB, bin string, lines int, args ...string) []string {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	var out []string
	sc := bufio.NewScanner(stdout)
	for len(out) < lines && sc.Scan() {
		out = append(out, sc.Text())
	}
	go func() {
		for sc.Scan() { // keep the pipe open and drained
		}
	}()
	if len(out) < lines {
		tb.Fatalf("%s printed %d lines, want %d", bin, len(out), lines)
	}
	return out
}
