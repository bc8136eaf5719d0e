package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/webhook"
)

// goTool runs the go command in dir with extra environment and fails the
// test with its output when it fails.
func goTool(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
}

// buildCommand builds this command into a temporary folder, as a user of
// another language would install it, and returns the binary's path.
func buildCommand(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "refserver")
	goTool(t, ".", nil, "build", "-o", bin, ".")
	return bin
}

// startBinary runs the built command with args, reads the MEDIAGEN_* lines
// it prints as a test in any language would, and interrupts it when the
// test ends.
func startBinary(t *testing.T, bin string, args ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(bin, args...)
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
			assert.NoError(t, err, "the command exits cleanly on SIGINT")
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("the command did not stop on SIGINT")
		}
	})

	want := 3
	if slices.Contains(args, "-test-control") {
		want = 4
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	vars := map[string]string{}
	for len(vars) < want {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "the command stopped printing after %v", vars)
			k, v, ok := strings.Cut(line, "=")
			require.True(t, ok, line)
			require.True(t, strings.HasPrefix(k, "MEDIAGEN_"), line)
			vars[k] = v
		case <-time.After(30 * time.Second):
			t.Fatalf("the command printed only %v", vars)
		}
	}
	go func() {
		for range lines {
		}
	}()
	return vars
}

// TestCommandTestControlEndToEnd is the check of issue 11 against the built
// command, with plain HTTP calls a curl script would make: a generation's
// GET answers 404 once the clock passed 24 hours, an upload URL is refused
// after 15 minutes, a delivery carries two signature entries after a
// rotation, and a retired voice answers 404.
func TestCommandTestControlEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	type delivery struct {
		body   []byte
		header http.Header
	}
	got := make(chan delivery, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- delivery{b, r.Header.Clone()}
	}))
	defer receiver.Close()

	vars := startBinary(t, buildCommand(t), "-addr", "127.0.0.1:0", "-api-key", "K", "-render-scale", "0.01",
		"-allow-http-webhooks", "-test-control")
	base, key, tc := vars["MEDIAGEN_BASE_URL"], vars["MEDIAGEN_API_KEY"], vars["MEDIAGEN_TEST_CONTROL_URL"]
	require.Equal(t, "K", key)
	require.Equal(t, base+"/test/v1", tc)
	oldSecret := vars["MEDIAGEN_WEBHOOK_SECRET"]

	// Rotation: from now on deliveries carry two signature entries.
	status, body := call(t, http.MethodPost, tc+"/webhook-secret/rotate", key, "")
	require.Equal(t, http.StatusOK, status, body)
	newSecret := body["webhookSecret"].(string)
	assert.Equal(t, oldSecret, body["previousSecret"])

	status, body = call(t, http.MethodPost, base+"/v3/generations", key,
		`{"feature":"image/generation","args":{"prompt":"a lighthouse"},"webhookUrl":"`+receiver.URL+`/hook"}`)
	require.Equal(t, http.StatusOK, status, body)
	genID := body["generation"].(map[string]any)["id"].(string)
	select {
	case d := <-got:
		entries := strings.Fields(d.header.Get(webhook.HeaderSignature))
		assert.Len(t, entries, 2, d.header.Get(webhook.HeaderSignature))
		assert.NoError(t, webhook.Verify(d.body, d.header, newSecret), "signed with the new secret")
		assert.NoError(t, webhook.Verify(d.body, d.header, oldSecret), "and with the previous one")
	case <-time.After(20 * time.Second):
		t.Fatal("no webhook delivery")
	}
	status, _ = call(t, http.MethodGet, base+"/v3/generations/"+genID, key, "")
	require.Equal(t, http.StatusOK, status)

	// A retired catalog voice answers 404.
	status, body = call(t, http.MethodGet, base+"/v3/voices", key, "")
	require.Equal(t, http.StatusOK, status, body)
	voiceID := body["voices"].([]any)[0].(map[string]any)["id"].(string)
	status, _ = call(t, http.MethodGet, base+"/v3/voices/"+voiceID, key, "")
	require.Equal(t, http.StatusOK, status)
	status, body = call(t, http.MethodPost, tc+"/voices/"+voiceID+"/retire", key, "")
	require.Equal(t, http.StatusOK, status, body)
	status, body = call(t, http.MethodGet, base+"/v3/voices/"+voiceID, key, "")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "not_found", errCode(body))

	// An upload URL is refused once 15 minutes passed.
	status, body = call(t, http.MethodPost, base+"/v3/files/upload-url", key, `{"bytes": 5, "contentType": "text/plain"}`)
	require.Equal(t, http.StatusOK, status, body)
	uploadURL := body["uploadUrl"].(string)
	status, body = call(t, http.MethodPost, tc+"/clock/advance", key, `{"duration": "15m1s"}`)
	require.Equal(t, http.StatusOK, status, body)
	req, err := http.NewRequest(http.MethodPut, uploadURL, strings.NewReader("hello"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	// A generation answers 404 once the clock passed 24 hours.
	status, body = call(t, http.MethodPost, tc+"/clock/advance", key, `{"seconds": 86400}`)
	require.Equal(t, http.StatusOK, status, body)
	status, body = call(t, http.MethodGet, base+"/v3/generations/"+genID, key, "")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "not_found", errCode(body))
}

// TestTestControlScript runs test-control.sh, the curl version of the check
// above that the README points to, against the built command.
func TestTestControlScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	cmd := exec.Command("bash", "test-control.sh")
	cmd.Env = append(os.Environ(), "REFSERVER="+buildCommand(t))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, want := range []string{"retired voice", "refused with 403", "answers 404 after 24 hours"} {
		assert.Contains(t, string(out), want)
	}
	if _, err := exec.LookPath("python3"); err == nil {
		assert.Contains(t, string(out), "carries 2 signature entries")
	}
}
