package mediagen_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/mediagen/mediagen-go"

// layers ranks the SDK's packages, top to bottom: a package may import only
// packages of a lower rank, so every arrow of the import graph points down.
var layers = map[string]int{
	"batch":           7,
	"upload":          6,
	"poll":            6,
	"hub":             5,
	"client":          4,
	"internal/charge": 3,
	"internal/engine": 2,
	"client/journal":  1,
	"webhook":         1,
	"":                0, // mediagen, the models
}

// outside are the public packages that stand beside the layers: the test
// kit (over client and the reference server) and the contract.
var outside = map[string]bool{"client/clienttest": true, "openapi": true}

// listed is what go list says of a package.
type listed struct {
	ImportPath string
	Standard   bool
	Deps       []string
}

// TestLayers fails when a package imports one of its own rank or above (go
// list -deps), when webhook reaches beyond the standard library and the
// models, or when a public package has no rank.
func TestLayers(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	out, err := exec.CommandContext(t.Context(), "go", "list", "-json", module+"/...").Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go list: %v\n%s", err, ee.Stderr)
	}
	require.NoError(t, err)
	problems := layerProblems(t, out)
	assert.Empty(t, problems)
}

// layerProblems reads go list's JSON and names every arrow that points up.
func layerProblems(t *testing.T, goList []byte) []string {
	var problems []string
	ranked := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(goList))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		rank, ok := layers[rel]
		public := !strings.HasPrefix(rel, "internal/") && !strings.HasPrefix(rel, "examples") && !strings.HasPrefix(rel, "cmd/")
		switch {
		case ok:
			ranked[rel] = true
		case public && !outside[rel]:
			problems = append(problems, p.ImportPath+" is public and has no rank in layers")
			continue
		default:
			continue
		}
		for _, dep := range p.Deps {
			if !strings.HasPrefix(dep, module) {
				if rel == "webhook" && strings.Contains(strings.SplitN(dep, "/", 2)[0], ".") {
					problems = append(problems, "webhook imports "+dep+": only the standard library and the models")
				}
				continue
			}
			drel := strings.TrimPrefix(strings.TrimPrefix(dep, module), "/")
			if rel == "webhook" && drel != "" {
				problems = append(problems, "webhook imports "+dep+": only the standard library and the models")
			}
			if r, ok := layers[drel]; ok && r >= rank {
				problems = append(problems, p.ImportPath+" imports "+dep+", of its rank or above")
			}
		}
	}
	for rel := range layers {
		if !ranked[rel] {
			problems = append(problems, module+"/"+rel+" is ranked but go list does not know it")
		}
	}
	return problems
}
