package main

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/modproxy"
)

const (
	sdkPath = "github.com/mediagen/mediagen-go"
	cmdPath = sdkPath + "/cmd/mediagen"
	// riverPath is the River module, which the command's worker imports;
	// it is released like the SDK, at riverVersion.
	riverPath    = sdkPath + "/river"
	riverVersion = "v0.0.0-20260101000000-0123456789ab"
	// sdkVersion is the SDK as a release of the command requires it: here a
	// pseudo-version, as `go get github.com/mediagen/mediagen-go@<commit>`
	// writes before the SDK has a tag.
	sdkVersion = "v0.0.0-20260101000000-0123456789ab"
	// cmdVersion is the command's release, tag cmd/mediagen/v0.1.0.
	cmdVersion = "v0.1.0"
	// devVersion is the command as committed, replace directive included.
	devVersion = "v0.0.9"
)

// TestInstallsAtLatest does what a user does once the command is
// released, `go install github.com/mediagen/mediagen-go/cmd/mediagen@latest`
// outside any module, against a module proxy on disk that serves this tree:
// the SDK at a pseudo-version, and the command at v0.1.0 as a release makes
// it (the replace directive dropped, the SDK required at that version,
// go mod tidy). The command as committed, with its replace directive, is
// refused by `go install ...@version`, which is why a release drops it.
// Dependencies come from the shared module cache's downloads, else from the
// environment's proxy (go mod tidy wants modules no build downloads); a
// private module cache keeps the made-up versions out of the shared one.
func TestInstallsAtLatest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command against a module proxy on disk")
	}
	here, err := os.Getwd()
	require.NoError(t, err)
	root := filepath.Dir(filepath.Dir(here))
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	shared := strings.TrimSpace(string(out))

	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	goproxy, err := modproxy.GOPROXY(proxy, filepath.Join(shared, "cache", "download"))
	require.NoError(t, err)
	env := []string{
		"GOWORK=off",
		"GOTOOLCHAIN=local",
		"GOFLAGS=-modcacherw", // so that t.TempDir can remove the private cache
		"GOMODCACHE=" + filepath.Join(tmp, "modcache"),
		"GOPROXY=" + goproxy,
		"GOSUMDB=off", // made-up versions are in no checksum database
		"GOBIN=" + filepath.Join(tmp, "bin"),
	}

	// The SDK, without its nested modules.
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	require.NoError(t, modproxy.Publish(proxy, sdkPath, sdkVersion, root, gomod))

	// The River module as released: its replace dropped, the SDK required.
	riverRelease := filepath.Join(tmp, "river-release")
	copyTree(t, filepath.Join(root, "river"), riverRelease)
	out, err = goCommand(riverRelease, env, "mod", "edit", "-dropreplace="+sdkPath, "-require="+sdkPath+"@"+sdkVersion)
	require.NoError(t, err, "%s", out)
	out, err = goCommand(riverRelease, env, "mod", "tidy")
	require.NoError(t, err, "%s", out)
	gomod, err = os.ReadFile(filepath.Join(riverRelease, "go.mod"))
	require.NoError(t, err)
	require.NoError(t, modproxy.Publish(proxy, riverPath, riverVersion, riverRelease, gomod))

	// The command as committed: refused, because of the replace directive.
	gomod, err = os.ReadFile(filepath.Join(here, "go.mod"))
	require.NoError(t, err)
	require.Contains(t, string(gomod), "replace "+sdkPath+" => ../..")
	require.NoError(t, modproxy.Publish(proxy, cmdPath, devVersion, here, gomod))
	work := filepath.Join(tmp, "work")
	require.NoError(t, os.MkdirAll(work, 0o755))
	out, err = goCommand(work, env, "install", cmdPath+"@"+devVersion)
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), "replace directives")

	// The command as released: the replace dropped, the SDK required at its
	// version, go.sum completed by go mod tidy.
	release := filepath.Join(tmp, "release")
	copyTree(t, here, release)
	out, err = goCommand(release, env, "mod", "edit", "-dropreplace="+sdkPath, "-require="+sdkPath+"@"+sdkVersion,
		"-dropreplace="+riverPath, "-require="+riverPath+"@"+riverVersion)
	require.NoError(t, err, "%s", out)
	out, err = goCommand(release, env, "mod", "tidy")
	require.NoError(t, err, "%s", out)
	gomod, err = os.ReadFile(filepath.Join(release, "go.mod"))
	require.NoError(t, err)
	require.NotContains(t, string(gomod), "replace")
	require.NoError(t, modproxy.Publish(proxy, cmdPath, cmdVersion, release, gomod))

	out, err = goCommand(work, env, "install", cmdPath+"@latest")
	require.NoError(t, err, "%s", out)
	installed := filepath.Join(tmp, "bin", "mediagen")
	out, err = exec.Command(installed, "--version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "mediagen version "+cmdVersion+"\n", string(out))

	// The installed command serves and talks to its server.
	cmd := exec.Command(installed, "serve", "--addr", "127.0.0.1:0", "--api-key", "K")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		assert.NoError(t, cmd.Wait())
	}()
	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan(), "mediagen serve printed nothing")
	base, ok := strings.CutPrefix(lines.Text(), "MEDIAGEN_BASE_URL=")
	require.True(t, ok, lines.Text())
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	r := run(t, work, []string{"MEDIAGEN_BASE_URL=" + base, "MEDIAGEN_API_KEY=K"}, "", "price", "image/generation")
	requireOK(t, r)
	assert.Contains(t, r.stdout, "image/generation")
}

// goCommand runs the go command in dir with env added.
func goCommand(dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	require.NoError(t, err)
}
