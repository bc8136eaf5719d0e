package examples

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMisplacedOptionsDoNotCompile type-checks small programs against this
// module's packages, as the compiler would: an option given where it does
// not apply (a wait's option to client.New, a run's option to a client
// call, a client option straight to a wait) must not compile, and the
// options where they belong, client options carried by WithClientOptions
// included, must. That is a property of the types, so it is checked on
// programs, not at run time. go/types reads the packages from source (the
// go command finds them), so the test needs neither network nor a build.
func TestMisplacedOptionsDoNotCompile(t *testing.T) {
	cases := []struct {
		name string
		stmt string
		// bad is the argument the compiler refuses; "" when the
		// statement compiles.
		bad string
	}{
		{"a wait's option to New", `_, _ = client.New(key, poll.WithMaxWait(time.Second))`, "poll.WithMaxWait(time.Second)"},
		{"a wait's option to a call", `_, _ = c.CreateGeneration(ctx, args, poll.WithInterval(time.Second))`, "poll.WithInterval(time.Second)"},
		{"a run's option to a call", `_, _ = c.CreateGeneration(ctx, args, batch.WithBudget(0))`, "batch.WithBudget(0)"},
		{"an upload's option to a call", `_, _ = c.Pricing(ctx, upload.WithProgress(nil))`, "upload.WithProgress(nil)"},
		{"a client option to a wait", `_, _ = poll.Generation(ctx, c, id, client.WithTimeout(time.Second))`, "client.WithTimeout(time.Second)"},
		{"a client option to an upload", `_, _ = upload.File(ctx, c, "logo.png", client.WithTimeout(time.Second))`, "client.WithTimeout(time.Second)"},
		{"a client option to a run", `_, _ = batch.Run(ctx, c, nil, client.WithMaxRetries(2))`, "client.WithMaxRetries(2)"},
		{"a wait's option to a run", `_, _ = batch.Run(ctx, c, nil, poll.WithHub(nil))`, "poll.WithHub(nil)"},
		{"a run's option to a wait", `_, _ = poll.Generation(ctx, c, id, batch.WithConcurrency(4))`, "batch.WithConcurrency(4)"},
		{"an upload's option to a wait", `_, _ = poll.Generation(ctx, c, id, upload.WithContentType("image/png"))`, `upload.WithContentType("image/png")`},
		{"a run's option carried to a wait", `_ = batch.WithPollOptions(batch.WithBudget(1))`, "batch.WithBudget(1)"},
		{"a wait's option carried as a client option", `_ = poll.WithClientOptions(poll.WithMaxWait(time.Second))`, "poll.WithMaxWait(time.Second)"},

		{"a wait's option", `_, _ = poll.Generation(ctx, c, id, poll.WithMaxWait(time.Second))`, ""},
		{"a client option carried to a wait", `_, _ = poll.Generation(ctx, c, id, poll.WithClientOptions(client.WithTimeout(time.Second)))`, ""},
		{"a client option carried to an upload", `_, _ = upload.File(ctx, c, "logo.png", upload.WithProgress(nil), upload.WithClientOptions(client.WithTimeout(time.Second)))`, ""},
		{"options carried to a run", `_, _ = batch.Run(ctx, c, nil, batch.WithBudget(1), batch.WithClientOptions(client.WithMaxRetries(2)), batch.WithPollOptions(poll.WithHub(nil)))`, ""},
		{"a client option to a call", `_, _ = c.CreateGeneration(ctx, args, client.WithTimeout(time.Second))`, ""},
	}

	// One program, a function per case, checked at once: the packages are
	// read once. Errors go to the case of their line.
	var src strings.Builder
	src.WriteString(misplacedHeader)
	line := map[int]int{} // the line of each case's statement
	for i, tc := range cases {
		fmt.Fprintf(&src, "\nfunc case%d(ctx context.Context, c *client.Client, key, id string, args client.Args) {\n", i)
		line[strings.Count(src.String(), "\n")+1] = i
		fmt.Fprintf(&src, "\t%s\n}\n", tc.stmt)
	}
	fset := token.NewFileSet()
	// Named inside the module, so the imports resolve to its packages.
	f, err := parser.ParseFile(fset, filepath.Join(moduleRoot(t), "examples", "misplaced.go"), src.String(), 0)
	require.NoError(t, err, src.String())

	// The importer reads every package from source, the standard
	// library's included; without cgo it need not run the cgo tool.
	cgo := build.Default.CgoEnabled
	build.Default.CgoEnabled = false
	t.Cleanup(func() { build.Default.CgoEnabled = cgo })
	errs := make([][]string, len(cases))
	conf := types.Config{
		Importer: importer.ForCompiler(fset, "source", nil),
		Error: func(err error) {
			te := err.(types.Error)
			i, ok := line[fset.Position(te.Pos).Line]
			if !ok {
				t.Errorf("an error outside the cases: %v", err)
				return
			}
			errs[i] = append(errs[i], te.Msg)
		},
	}
	_, _ = conf.Check("example.com/misplaced", fset, []*ast.File{f}, nil)

	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.bad == "" {
				assert.Empty(t, errs[i], "%s\nshould compile", tc.stmt)
				return
			}
			require.Len(t, errs[i], 1, "%s\nshould fail to compile, for its option alone", tc.stmt)
			assert.True(t, strings.HasPrefix(errs[i][0], "cannot use "+tc.bad+" "), "%s: %s", tc.stmt, errs[i][0])
		})
	}
}

// misplacedHeader begins the program of TestMisplacedOptionsDoNotCompile;
// each case is a function that has at hand what a program has: a
// context, a client, an API key, a generation id and arguments.
const misplacedHeader = `package misplaced

import (
	"context"
	"time"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/batch"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/upload"
)

var (
	_ = time.Second
	_ batch.Option
	_ poll.Option
	_ upload.Option
)
`
