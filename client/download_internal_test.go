package client

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSafeNamesAreDistinct: ids that clean to the same characters, or that
// differ by case only, get distinct names, and no name leaves its folder.
func TestSafeNamesAreDistinct(t *testing.T) {
	ids := []string{"a/b", "a b", "a_b", "A_B", "../../etc/passwd", "..", ".", "gen_01", "Gen_01", "ü", "?", strings.Repeat("x", 300), strings.Repeat("x", 300) + "y"}
	seen := map[string]string{}
	for _, id := range ids {
		name := safeName(id)
		assert.NotEmpty(t, name, "%q", id)
		lower := strings.ToLower(name)
		if prev, ok := seen[lower]; ok {
			t.Errorf("%q and %q both name %q", prev, id, name)
		}
		seen[lower] = id
		assert.Equal(t, name, filepath.Base(name), "%q stays in its folder", id)
		assert.NotContains(t, []string{".", ".."}, name)
	}
	assert.Equal(t, "gen_01", safeName("gen_01"), "a plain id names its file as it is")
}
