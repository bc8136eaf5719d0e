package webhook_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStandardLibraryOnly keeps the promise that a webhook receiver pulls in
// nothing but the standard library and this module's models (package mediagen).
func TestStandardLibraryOnly(t *testing.T) {
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to list dependencies")
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)

	nonStandard := strings.Fields(string(out))
	assert.ElementsMatch(t, []string{
		"github.com/mediagen/mediagen-go",
		"github.com/mediagen/mediagen-go/webhook",
	}, nonStandard)
}
