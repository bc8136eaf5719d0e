package main

import (
	"archive/zip"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
	// Offline: every dependency is already in the module cache.
	goTool(t, dir, []string{"GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off"}, "build", "-o", bin, commandPath)
	vars := startBinary(t, bin, "-addr", "127.0.0.1:0", "-api-key", "K", "-test-control")
	require.Equal(t, "K", vars["MEDIAGEN_API_KEY"])
	require.Equal(t, vars["MEDIAGEN_BASE_URL"]+"/test/v1", vars["MEDIAGEN_TEST_CONTROL_URL"])
}

// TestCommandInstallsAtAVersion does what a user of another language does
// once the module is published, `go install <command path>@<version>` with
// no go.mod around, against a module proxy on disk that serves this
// working tree as a made-up version. Dependencies come from the local module
// cache, so it needs no network; its own module cache keeps the shared one
// untouched.
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
	writeProxyModule(t, proxy, root, version)

	work, gobin := filepath.Join(tmp, "work"), filepath.Join(tmp, "bin")
	require.NoError(t, os.MkdirAll(work, 0o755))
	goTool(t, work, []string{
		"GOWORK=off",
		"GOFLAGS=-modcacherw", // so that t.TempDir can remove the private cache
		"GOMODCACHE=" + filepath.Join(tmp, "modcache"),
		"GOPROXY=" + fileURL(proxy) + "," + fileURL(filepath.Join(sharedCache, "cache", "download")),
		"GOSUMDB=off", // the made-up version is in no checksum database
		"GOBIN=" + gobin,
	}, "install", commandPath+"@"+version)

	vars := startBinary(t, filepath.Join(gobin, "refserver"), "-addr", "127.0.0.1:0", "-api-key", "K")
	require.Equal(t, "K", vars["MEDIAGEN_API_KEY"])
}

func fileURL(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // Windows: file:///C:/...
	}
	return "file://" + p
}

// writeProxyModule lays out the module at root as version in a GOPROXY
// folder: list, .info, .mod and a .zip of the files a module zip holds
// (nested modules and VCS folders left out).
func writeProxyModule(t *testing.T, proxy, root, version string) {
	t.Helper()
	dir := filepath.Join(proxy, filepath.FromSlash(modulePath), "@v")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, version+".mod"), gomod, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, version+".info"), []byte(`{"Version":"`+version+`","Time":"2026-01-01T00:00:00Z"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "list"), []byte(version+"\n"), 0o644))

	f, err := os.Create(filepath.Join(dir, version+".zip"))
	require.NoError(t, err)
	defer f.Close()
	zw := zip.NewWriter(f)
	prefix := modulePath + "@" + version + "/"
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".hg", ".svn", ".bzr", "node_modules":
				return filepath.SkipDir
			}
			if rel != "." {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // a nested module is not part of this one
				}
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(d.Name(), ".test") {
			return nil
		}
		w, err := zw.Create(prefix + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(w, src)
		return err
	})
	require.NoError(t, err)
	require.NoError(t, zw.Close())
}
