// Package proctest starts a command for a test, such as the reference
// server command, and reads the KEY=VALUE lines it prints before it serves.
package proctest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
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

// RefServer builds the reference server command (internal/cmd/refserver,
// in this module's tree, so a test of another module of the repository
// can run it too), starts it with args, and returns the variables it
// prints (MEDIAGEN_BASE_URL, MEDIAGEN_API_KEY, MEDIAGEN_WEBHOOK_SECRET, and
// MEDIAGEN_TEST_CONTROL_URL with -test-control). It stops with the test.
func RefServer(tb testing.TB, args ...string) map[string]string {
	tb.Helper()
	return StartRefServer(tb, BuildRefServer(tb), args...)
}

// BuildRefServer builds the reference server command into a folder of the
// test and returns its path, for a test that starts it more than once
// (StartRefServer) and so builds it once.
func BuildRefServer(tb testing.TB) string {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	bin := filepath.Join(tb.TempDir(), "refserver")
	if out, err := exec.Command("go", "build", "-C", root, "-o", bin, "./internal/cmd/refserver").CombinedOutput(); err != nil {
		tb.Fatalf("building the reference server command: %v\n%s", err, out)
	}
	return bin
}

// StartRefServer starts bin, the command BuildRefServer built, with args
// and returns its variables, as RefServer does.
func StartRefServer(tb testing.TB, bin string, args ...string) map[string]string {
	tb.Helper()
	lines := 3
	if slices.Contains(args, "-test-control") {
		lines = 4
	}
	vars := map[string]string{}
	for _, l := range Start(tb, bin, lines, args...) {
		k, v, _ := strings.Cut(l, "=")
		vars[k] = v
	}
	return vars
}

// Env returns vars as KEY=VALUE lines, sorted, to add to a child
// process's environment.
func Env(vars map[string]string) []string {
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}
