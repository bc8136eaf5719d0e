package modproxy

import (
	"archive/zip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPublish(t *testing.T) {
	src := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":            "module example.com/m\n\nreplace x => ../x\n",
		"m.go":              "package m\n",
		"sub/s.go":          "package sub\n",
		"nested/go.mod":     "module example.com/m/nested\n",
		"nested/n.go":       "package nested\n",
		".git/HEAD":         "ref\n",
		"m.test":            "binary",
		"bin/tool":          "binary",
		"bin/tool.go":       "package main\n",
		"other/keep/k.go":   "package keep\n",
		"other/keep/k2.txt": "text\n",
	} {
		p := filepath.Join(src, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	proxy := t.TempDir()
	released := []byte("module example.com/m\n")
	require.NoError(t, Publish(proxy, "example.com/m", "v1.0.0", src, released, "bin/tool"))
	require.NoError(t, Publish(proxy, "example.com/m", "v0.0.0-20260101000000-0123456789ab", src, released))

	at := filepath.Join(proxy, "example.com", "m", "@v")
	list, err := os.ReadFile(filepath.Join(at, "list"))
	require.NoError(t, err)
	assert.Equal(t, "v1.0.0\n", string(list), "a pseudo-version is not listed")
	mod, err := os.ReadFile(filepath.Join(at, "v1.0.0.mod"))
	require.NoError(t, err)
	assert.Equal(t, released, mod)

	zr, err := zip.OpenReader(filepath.Join(at, "v1.0.0.zip"))
	require.NoError(t, err)
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.Name == "example.com/m@v1.0.0/go.mod" {
			rc, err := f.Open()
			require.NoError(t, err)
			b := make([]byte, 100)
			n, _ := rc.Read(b)
			rc.Close()
			assert.Equal(t, string(released), string(b[:n]), "the zip carries the released go.mod")
		}
	}
	slices.Sort(names)
	assert.Equal(t, []string{
		"example.com/m@v1.0.0/bin/tool.go",
		"example.com/m@v1.0.0/go.mod",
		"example.com/m@v1.0.0/m.go",
		"example.com/m@v1.0.0/other/keep/k.go",
		"example.com/m@v1.0.0/other/keep/k2.txt",
		"example.com/m@v1.0.0/sub/s.go",
	}, names)
	assert.Equal(t, "file:///a/b", FileURL("/a/b"))
}

func TestGOPROXY(t *testing.T) {
	t.Setenv("GOPROXY", "https://proxy.example|direct")
	got, err := GOPROXY("/a", "/b/c")
	require.NoError(t, err)
	assert.Equal(t, "file:///a,file:///b/c,https://proxy.example|direct", got, "the environment's list follows the folders")

	t.Setenv("GOPROXY", "off")
	got, err = GOPROXY()
	require.NoError(t, err)
	assert.Equal(t, "off", got)
}
