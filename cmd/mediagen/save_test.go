package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDistinctFilesForDistinctIDs saves generations whose ids clean to the
// same name: each keeps its own file.
func TestDistinctFilesForDistinctIDs(t *testing.T) {
	env := fakeService(t)
	dir := t.TempDir()
	ids := []string{"a/b", "a b", "a_b"}

	r := run(t, dir, env, "", append([]string{"wait", "--save", "out", "--json"}, ids...)...)
	requireOK(t, r)
	paths := map[string]string{}
	for _, row := range jsonLines(t, r.stdout) {
		g := row["generation"].(map[string]any)
		paths[row["id"].(string)] = g["saved"].(map[string]any)["path"].(string)
	}
	require.Len(t, paths, 3)
	for _, id := range ids {
		b, err := os.ReadFile(filepath.Join(dir, paths[id]))
		require.NoError(t, err)
		assert.Equal(t, "output of "+id, string(b), "the file of %q is its own", id)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "out"))
	require.NoError(t, err)
	assert.Len(t, entries, 3, "three files, nothing left over")

	for _, id := range ids {
		r := run(t, dir, env, "", "download", id, "--dir", "again")
		requireOK(t, r)
		b, err := os.ReadFile(filepath.Join(dir, strings.TrimSpace(r.stdout)))
		require.NoError(t, err)
		assert.Equal(t, "output of "+id, string(b))
	}
	entries, err = os.ReadDir(filepath.Join(dir, "again"))
	require.NoError(t, err)
	assert.Len(t, entries, 3)
}

func TestFileName(t *testing.T) {
	dir := filepath.Join("base", "out")
	ids := []string{"gen_0001abc", "a/b", "a b", "a_b", "A_B", "a.b", "a.poster", "..", ".", "", "/", "../../etc/passwd",
		`..\..\win`, "a\x00b", "ünïcode", strings.Repeat("x", 300), strings.Repeat("x", 301),
		"a_b-" + strings.Repeat("0", 16), fileName("a/b")}
	seen := map[string]string{}
	for _, id := range ids {
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			name := fileName(id)
			require.NotEmpty(t, name)
			lower := strings.ToLower(name)
			if other, ok := seen[lower]; ok {
				t.Fatalf("%q and %q share the file name %q (on a case-insensitive system)", id, other, name)
			}
			seen[lower] = id
			assert.Regexp(t, `^[a-z0-9_-]+$`, name, "no separator, no dot, one case")
			assert.LessOrEqual(t, len(name+".poster.jpeg"), 255)
			for _, ext := range []string{".png", ".poster.jpg", ".txt"} {
				rel, err := filepath.Rel(dir, filepath.Join(dir, name+ext))
				require.NoError(t, err)
				assert.Equal(t, name+ext, rel, "stays in the folder")
			}
		})
	}
	assert.Equal(t, "gen_0001abc", fileName("gen_0001abc"), "a plain id is its own name")
	assert.Equal(t, fileName("a b"), fileName("a b"), "the same id, the same name")
}
