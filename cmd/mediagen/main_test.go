package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/pgtest"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// binary is the command, built once for every test as a user installs it.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mediagen-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "mediagen")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if err := pgtest.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one run of the command printed and its exit code.
type result struct {
	stdout, stderr string
	code           int
}

// command prepares a run of the built command with args, in dir, with env
// added to an environment that has no MEDIAGEN_ variable of the machine's.
func command(t *testing.T, dir string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MEDIAGEN_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// interrupt starts cmd, sends it Ctrl-C after d (once it is at work), and
// returns its exit code and standard error.
func interrupt(t *testing.T, cmd *exec.Cmd, d time.Duration) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	time.Sleep(d)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	_ = cmd.Wait()
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// run runs the built command with stdin and returns what it printed; the
// streams are pipes, not a terminal, as in a script.
func run(t *testing.T, dir string, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := command(t, dir, env, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// requireOK fails the test unless r is a success with nothing on stderr.
func requireOK(t *testing.T, r result) {
	t.Helper()
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Empty(t, r.stderr)
}

// requireFailure checks that r failed with code and one line on stderr
// containing want, and printed nothing on stdout.
func requireFailure(t *testing.T, r result, code int, want string) {
	t.Helper()
	require.Equal(t, code, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Empty(t, r.stdout)
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
	assert.True(t, strings.HasPrefix(r.stderr, "mediagen: "), r.stderr)
	assert.Contains(t, r.stderr, want)
}

// server is a `mediagen serve` subprocess, as its variables told.
type server struct {
	base, key, secret, control string
}

// env is the environment a user exports to talk to s.
func (s server) env() []string {
	return []string{"MEDIAGEN_BASE_URL=" + s.base, "MEDIAGEN_API_KEY=" + s.key, "MEDIAGEN_WEBHOOK_SECRET=" + s.secret}
}

// startServe runs `mediagen serve` on a free loopback port with fast renders,
// test control and loopback webhooks, plus args, and stops it with SIGINT
// when the test ends, checking that it exits 0.
func startServe(t *testing.T, args ...string) server {
	t.Helper()
	args = append([]string{"serve", "--addr", "127.0.0.1:0", "--render-scale", "0.01", "--test-control", "--allow-http-webhooks"}, args...)
	cmd := exec.Command(binary, args...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			assert.NoError(t, err, "mediagen serve exits 0 on SIGINT")
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("mediagen serve did not stop on SIGINT")
		}
	})
	vars := map[string]string{}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	for len(vars) < 4 {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "mediagen serve stopped printing after %v", vars)
			k, v, ok := strings.Cut(line, "=")
			require.True(t, ok, line)
			vars[k] = v
		case <-time.After(30 * time.Second):
			t.Fatalf("mediagen serve printed only %v", vars)
		}
	}
	go func() {
		for range lines {
		}
	}()
	return server{base: vars["MEDIAGEN_BASE_URL"], key: vars["MEDIAGEN_API_KEY"],
		secret: vars["MEDIAGEN_WEBHOOK_SECRET"], control: vars["MEDIAGEN_TEST_CONTROL_URL"]}
}

// call makes a test-control or API call as s's project and decodes the
// answer into out, when not nil.
func (s server) call(t *testing.T, method, url, body string, out any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", s.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	if out != nil {
		require.NoError(t, json.Unmarshal(b, out), string(b))
	}
}

// balance is the project's balance, through test control.
func (s server) balance(t *testing.T) float64 {
	t.Helper()
	var b struct{ Balance float64 }
	s.call(t, http.MethodGet, s.control+"/balance", "", &b)
	return b.Balance
}

// setBalance sets the project's balance, through test control.
func (s server) setBalance(t *testing.T, usd float64) {
	t.Helper()
	s.call(t, http.MethodPut, s.control+"/balance", fmt.Sprintf(`{"balance":%v}`, usd), nil)
}

// inProcess is a clienttest server on the wall clock, for the cases
// `mediagen serve` cannot play (renders that fail), and its environment.
func inProcess(t *testing.T, opts ...clienttest.Option) (*clienttest.Server, []string) {
	t.Helper()
	srv := clienttest.NewServer(t, append([]clienttest.Option{clienttest.WithWallClock()}, opts...)...)
	return srv, []string{"MEDIAGEN_BASE_URL=" + srv.URL(), "MEDIAGEN_API_KEY=" + srv.APIKey(), "MEDIAGEN_WEBHOOK_SECRET=" + srv.WebhookSecret()}
}

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name string, content []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, content, 0o644))
	return p
}

// logo writes a small PNG into dir and returns its name.
func logo(t *testing.T, dir string) string {
	t.Helper()
	writeFile(t, dir, "logo.png", media.PNG(64, 64, "logo"))
	return "logo.png"
}

// decode decodes one JSON document into a value of type T.
func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(s), &v), s)
	return v
}

// jsonLines decodes one JSON object per line.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, decode[map[string]any](t, line))
	}
	return out
}
