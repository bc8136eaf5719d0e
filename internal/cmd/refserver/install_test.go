package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/modproxy"
)

const (
	modulePath  = "github.com/mediagen/mediagen-go"
	commandPath = modulePath + "/internal/cmd/refserver"
)

// moduleRoot is the folder of this repository's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	require.NoError(t, err)
	gomod := strings.TrimSpace(string(out))
	require.NotEmpty(t, gomod)
	return filepath.Dir(gomod)
}

// Go's internal rule governs imports only: another module may not import
// github.com/mediagen/mediagen-go/internal/..., but it may build, run and
// install the main package at internal/cmd/refserver by its path. These
// tests prove it from outside this repository.

// TestCommandBuildsFromAnotherModule builds the command from a scratch
// module that requires this one through a replace directive.
func TestCommandBuildsFromAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command in a scratch module")
	}
	root := moduleRoot(t)
	dir := t.TempDir()
	gomod := "module example.com/scratch\n\ngo 1.25.0\n\nrequire " + modulePath + " v0.0.0\n\nreplace " + modulePath + " => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))

	bin := filepath.Join(dir, "refserver")
	// The environment's proxy and module cache: a new machine's cache lacks
	// modules of the graph that no build of this repository downloads.
	goTool(t, dir, []string{"GOWORK=off", "GOFLAGS=-mod=mod"}, "build", "-o", bin, commandPath)
	vars := startBinary(t, bin, "-addr", "127.0.0.1:0", "-api-key", "K", "-test-control")
	require.Equal(t, "K", vars["MEDIAGEN_API_KEY"])
	require.Equal(t, vars["MEDIAGEN_BASE_URL"]+"/test/v1", vars["MEDIAGEN_TEST_CONTROL_URL"])
}

// TestCommandInstallsAtAVersion does what a user of another language does
// once the module is published, `go install <command path>@<version>` with
// no go.mod around, against a module proxy on disk that serves this
// working tree as a made-up version. Dependencies come from the shared
// module cache's downloads, else from the environment's proxy; its own
// module cache keeps the made-up version out of the shared one.
func TestCommandInstallsAtAVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command against a module proxy on disk")
	}
	root := moduleRoot(t)
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	sharedCache := strings.TrimSpace(string(out))

	const version = "v0.0.1-scratch"
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	require.NoError(t, modproxy.Publish(proxy, modulePath, version, root, gomod))
	goproxy, err := modproxy.GOPROXY(proxy, filepath.Join(sharedCache, "cache", "download"))
	require.NoError(t, err)

	work, gobin := filepath.Join(tmp, "work"), filepath.Join(tmp, "bin")
	require.NoError(t, os.MkdirAll(work, 0o755))
	goTool(t, work, []string{
		"GOWORK=off",
		"GOFLAGS=-modcacherw", // so that t.TempDir can remove the private cache
		"GOMODCACHE=" + filepath.Join(tmp, "modcache"),
		"GOPROXY=" + goproxy,
		"GOSUMDB=off", // the made-up version is in no checksum database
		"GOBIN=" + gobin,
	}, "install", commandPath+"@"+version)

	vars := startBinary(t, filepath.Join(gobin, "refserver"), "-addr", "127.0.0.1:0", "-api-key", "K")
	require.Equal(t, "K", vars["MEDIAGEN_API_KEY"])
}
