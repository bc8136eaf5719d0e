// Package modproxy lays out modules in a GOPROXY folder on disk, so that a
// test can run `go install <path>@<version>` as a user does once a module is
// published: GOPROXY(folder, ...) lists that folder first, then the proxy of
// the environment, which serves the dependencies.
package modproxy

import (
	"archive/zip"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// pseudoVersion matches the end of a pseudo-version such as
// v0.0.0-20260101000000-0123456789ab.
var pseudoVersion = regexp.MustCompile(`-\d{14}-[0-9a-f]{12}$`)

// Publish lays out the module in dir as version of path under proxy: the
// .info, the .mod (gomod, which also replaces dir's go.mod in the zip, so
// that a test can publish a go.mod as a release would have it) and a .zip
// of the files a module zip holds: nested modules, VCS folders, test
// binaries (*.test) and the names in skip (relative to dir) left out.
// A version that is not a pseudo-version is added to the module's list, as
// a tag would be.
func Publish(proxy, path, version, dir string, gomod []byte, skip ...string) error {
	at := filepath.Join(proxy, filepath.FromSlash(path), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(at, version+".mod"), gomod, 0o644); err != nil {
		return err
	}
	info := `{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`
	if err := os.WriteFile(filepath.Join(at, version+".info"), []byte(info), 0o644); err != nil {
		return err
	}
	if !pseudoVersion.MatchString(version) {
		list, err := os.ReadFile(filepath.Join(at, "list"))
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		if err := os.WriteFile(filepath.Join(at, "list"), append(list, version+"\n"...), 0o644); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(at, version+".zip"))
	if err != nil {
		return err
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	if err := addTree(zw, path+"@"+version+"/", dir, gomod, skip); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// addTree adds the module's files under dir to zw, each under prefix.
func addTree(zw *zip.Writer, prefix, dir string, gomod []byte, skip []string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, s := range skip {
			if rel == s {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".hg", ".svn", ".bzr", "node_modules":
				return filepath.SkipDir
			}
			if rel != "." {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // a nested module is not part of this one
				}
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(d.Name(), ".test") {
			return nil
		}
		w, err := zw.Create(prefix + rel)
		if err != nil {
			return err
		}
		if rel == "go.mod" {
			_, err = w.Write(gomod)
			return err
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(w, src)
		return err
	})
}

// FileURL is the file:// URL of a folder, for GOPROXY.
func FileURL(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // Windows: file:///C:/...
	}
	return "file://" + p
}

// GOPROXY is a GOPROXY value listing the folders first, as file:// URLs,
// then the environment's own list (go env GOPROXY). A module absent from the
// folders then comes from where the go command fetches it anyway: a new
// machine's module cache holds none of them.
func GOPROXY(folders ...string) (string, error) {
	out, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		return "", err
	}
	var list []string
	for _, f := range folders {
		list = append(list, FileURL(f))
	}
	if env := strings.TrimSpace(string(out)); env != "" {
		list = append(list, env)
	}
	return strings.Join(list, ","), nil
}
