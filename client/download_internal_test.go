package client

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSafeNamesAreDistinct: ids that clean to the same characters, or that
// differ by case only, get distinct names, and no name leaves its folder.
func TestSafeNamesAreDistinct(t *testing.T) {
	dir := filepath.Join("base", "out")
	ids := []string{"gen_0001abc", "a/b", "a b", "a_b", "A_B", "a.b", "a.poster", "..", ".", "", "/", "../../etc/passwd",
		`..\..\win`, "a\x00b", "ünïcode", strings.Repeat("x", 300), strings.Repeat("x", 301),
		"a_b-" + strings.Repeat("0", 16), safeName("a/b")}
	seen := map[string]string{}
	for _, id := range ids {
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			name := safeName(id)
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
	assert.Equal(t, "gen_0001abc", safeName("gen_0001abc"), "a plain id is its own name")
	assert.Equal(t, safeName("a b"), safeName("a b"), "the same id, the same name")
}
