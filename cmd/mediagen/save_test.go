package main

import (
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
