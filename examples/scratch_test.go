// Package examples holds no code of its own: its test checks, from a
// module outside this repository, what a user copies from us.
package examples

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const modulePath = "github.com/mediagen/mediagen-go"

// TestScratchModule does what a user does: in a module of its own, outside
// this repository, it builds a copy of every example program, compiles
// every Go snippet of the README (and runs the tests among them), and runs
// a test that submits one generation of each kind and a voice clone
// against clienttest and waits for each with poll's defaults, which must
// take under 2 s of wall time. Only public packages are reachable from
// there: a copied example or snippet importing an internal package fails to
// build.
//
// The module requires this one through a replace directive; every other
// dependency comes from the environment's module cache and proxy, as a
// user's would (a new machine's cache lacks some of the module graph).
func TestScratchModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a scratch module with the go command")
	}
	root := moduleRoot(t)
	dir := t.TempDir()

	gomod := "module example.com/scratch\n\ngo 1.25.0\n\nrequire " + modulePath + " v0.0.0\n\nreplace " + modulePath + " => " + root + "\n"
	writeFile(t, filepath.Join(dir, "go.mod"), gomod)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	writeFile(t, filepath.Join(dir, "go.sum"), string(sum))

	// The example programs, as they are (their own tests stay here).
	programs, err := filepath.Glob(filepath.Join(root, "examples", "*", "main.go"))
	require.NoError(t, err)
	require.NotEmpty(t, programs)
	var names []string
	for _, main := range programs {
		if _, err := os.Stat(filepath.Join(filepath.Dir(main), "go.mod")); err == nil {
			continue // a module of its own (examples/blobsave), tested by .ci/run
		}
		name := filepath.Base(filepath.Dir(main))
		names = append(names, name)
		sources, err := filepath.Glob(filepath.Join(filepath.Dir(main), "*.go"))
		require.NoError(t, err)
		for _, src := range sources {
			if strings.HasSuffix(src, "_test.go") {
				continue
			}
			b, err := os.ReadFile(src)
			require.NoError(t, err)
			writeFile(t, filepath.Join(dir, "examples", name, filepath.Base(src)), string(b))
		}
	}
	require.Subset(t, names, []string{"batch", "quickstart", "resume", "voiceover", "webhooks"})

	// The README's Go snippets, in a test file of their own package.
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	require.Contains(t, string(readme), "go run ./examples/quickstart")
	require.Contains(t, string(readme), "go test ./...")
	writeFile(t, filepath.Join(dir, "readme", "readme_test.go"), readmeTestFile(t, string(readme)))

	// The user's test of every kind, and a program on the public models.
	writeFile(t, filepath.Join(dir, "kinds", "kinds_test.go"), kindsTest)
	writeFile(t, filepath.Join(dir, "v1face", "main.go"), v1Face)

	env := []string{"GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"}
	goTool(t, dir, env, "build", "./...")
	out := goTool(t, dir, env, "test", "-count=1", "-v", "./readme", "./kinds")
	require.Contains(t, out, "--- PASS: TestEveryKindWithPollDefaults")
	for _, m := range regexp.MustCompile(`(?m)^func (Test\w+)\(`).FindAllStringSubmatch(string(readme), -1) {
		require.Contains(t, out, "--- PASS: "+m[1], "the README's test runs")
	}
	require.NotContains(t, out, "--- FAIL")
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "wall time") {
			t.Log(strings.TrimSpace(line))
		}
	}

	// The program on the public models runs against the reference server
	// command, as a user's program runs against the service.
	bin := filepath.Join(dir, "bin")
	goTool(t, root, nil, "build", "-o", filepath.Join(bin, "refserver"), "./internal/cmd/refserver")
	goTool(t, dir, env, "build", "-o", filepath.Join(bin, "v1face"), "./v1face")
	vars := startRefserver(t, filepath.Join(bin, "refserver"), "-addr", "127.0.0.1:0", "-render-scale", "0.01")
	cmd := exec.Command(filepath.Join(bin, "v1face"), writePNG(t, dir, "logo.png"))
	cmd.Env = append(os.Environ(), "MEDIAGEN_API_KEY="+vars["MEDIAGEN_API_KEY"], "MEDIAGEN_BASE_URL="+vars["MEDIAGEN_BASE_URL"])
	got, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", got)
	require.Contains(t, string(got), "video/logo-reveal done")
}

// TestReadmeSnippetsAreFormatted keeps the README's Go as gofmt writes it.
func TestReadmeSnippetsAreFormatted(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(moduleRoot(t), "README.md"))
	require.NoError(t, err)
	for i, m := range goBlock.FindAllStringSubmatch(string(readme), -1) {
		snippet := m[1]
		if strings.HasPrefix(strings.TrimSpace(snippet), "func ") {
			got, err := format.Source([]byte(snippet))
			require.NoError(t, err, "README snippet %d", i+1)
			require.Equal(t, snippet, string(got), "README snippet %d is not gofmt'ed", i+1)
			continue
		}
		// Statements: format them as a function body, then unindent.
		indented := "\t" + strings.ReplaceAll(strings.TrimSuffix(snippet, "\n"), "\n", "\n\t") + "\n"
		indented = regexp.MustCompile(`(?m)^\t$`).ReplaceAllString(indented, "")
		src := "package p\n\nfunc f() {\n" + indented + "}\n"
		got, err := format.Source([]byte(src))
		require.NoError(t, err, "README snippet %d", i+1)
		body := strings.TrimSuffix(strings.TrimPrefix(string(got), "package p\n\nfunc f() {\n"), "}\n")
		body = regexp.MustCompile(`(?m)^\t`).ReplaceAllString(body, "")
		require.Equal(t, snippet, body, "README snippet %d is not gofmt'ed", i+1)
	}
}

// moduleRoot is the folder of this repository's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	require.NoError(t, err)
	gomod := strings.TrimSpace(string(out))
	require.NotEmpty(t, gomod)
	return filepath.Dir(gomod)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// goTool runs the go command in dir with env added, failing the test with
// its output when it fails, and returns that output.
func goTool(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// snippetImports maps the package names README snippets use to their
// import paths.
var snippetImports = map[string]string{
	"mediagen":   modulePath,
	"client":     modulePath + "/client",
	"clienttest": modulePath + "/client/clienttest",
	"poll":       modulePath + "/poll",
	"hub":        modulePath + "/hub",
	"upload":     modulePath + "/upload",
	"webhook":    modulePath + "/webhook",
	"require":    "github.com/stretchr/testify/require",
	"context":    "context",
	"errors":     "errors",
	"fmt":        "fmt",
	"http":       "net/http",
	"os":         "os",
	"sql":        "database/sql",
	"journal":    modulePath + "/client/journal",
	"testing":    "testing",
	"time":       "time",
	"otel":       "go.opentelemetry.io/otel",
}

var goBlock = regexp.MustCompile("(?ms)^```go\n(.*?)^```")

// readmeTestFile turns the README's Go snippets into one test file. A
// snippet that declares functions stays at the top level (a TestXxx among
// them runs); a snippet of statements becomes the body of a function whose
// parameters are the names snippets take as given (ctx, t, secret,
// handle), with every variable it declares but err used once more, so that
// a snippet need not use all it shows yet must check the errors it gets (a
// user who copies it has no line that reads err).
func readmeTestFile(t *testing.T, readme string) string {
	t.Helper()
	blocks := goBlock.FindAllStringSubmatch(readme, -1)
	require.NotEmpty(t, blocks)
	var body strings.Builder
	var all strings.Builder
	for i, m := range blocks {
		snippet := m[1]
		all.WriteString(snippet)
		if strings.HasPrefix(strings.TrimSpace(snippet), "func ") {
			fmt.Fprintf(&body, "// README snippet %d\n%s\n", i+1, snippet)
			continue
		}
		fn := fmt.Sprintf("func readmeSnippet%d(ctx context.Context, t *testing.T, secret string, handle func(context.Context, *webhook.Event) error) error {\n%s\n", i+1, snippet)
		for _, name := range declaredNames(t, i+1, snippet) {
			if name != "err" {
				fn += "\t_ = " + name + "\n"
			}
		}
		fn += "\treturn nil\n}\n"
		fmt.Fprintf(&body, "// README snippet %d\n%s\n", i+1, fn)
	}
	used := "context testing webhook " + all.String() // the wrapper's parameters need these
	var imports []string
	for name, path := range snippetImports {
		if regexp.MustCompile(`\b` + name + `\.`).MatchString(used) {
			imports = append(imports, fmt.Sprintf("%s %q", name, path))
		}
	}
	slices.Sort(imports)
	return "package readme_test\n\nimport (\n\t" + strings.Join(imports, "\n\t") + "\n)\n\n" + body.String()
}

// declaredNames lists the variables a snippet of statements declares at its
// top level.
func declaredNames(t *testing.T, n int, snippet string) []string {
	t.Helper()
	src := "package p\nfunc f() {\n" + snippet + "\n}\n"
	f, err := parser.ParseFile(token.NewFileSet(), fmt.Sprintf("README snippet %d", n), src, 0)
	require.NoError(t, err)
	var names []string
	add := func(id *ast.Ident) {
		if id.Name != "_" && !slices.Contains(names, id.Name) {
			names = append(names, id.Name)
		}
	}
	for _, st := range f.Decls[0].(*ast.FuncDecl).Body.List {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, e := range st.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						add(id)
					}
				}
			}
		case *ast.DeclStmt:
			if g, ok := st.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, spec := range g.Specs {
					for _, id := range spec.(*ast.ValueSpec).Names {
						add(id)
					}
				}
			}
		}
	}
	return names
}

// kindsTest is a user's test: submit, then wait with poll's defaults, for
// every kind, against the test kit, and take under 2 s of wall time.
var kindsTest = `package kinds_test

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"testing"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/upload"
)

func TestEveryKindWithPollDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []clienttest.Option
	}{
		{"default render scale", nil},
		{"renders at their real length", []clienttest.Option{clienttest.WithRenderScale(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			srv := clienttest.NewServer(t, tc.opts...)
			c := srv.Client()
			ctx := t.Context()

			img := image.NewNRGBA(image.Rect(0, 0, 64, 64))
			img.Set(32, 32, color.NRGBA{R: 255, A: 255})
			var logoPNG bytes.Buffer
			if err := png.Encode(&logoPNG, img); err != nil {
				t.Fatal(err)
			}
			logo, err := upload.Reader(ctx, c, bytes.NewReader(logoPNG.Bytes()), int64(logoPNG.Len()), "image/png")
			if err != nil {
				t.Fatal(err)
			}

			for _, args := range []client.Args{
				client.ImageGenerationArgs{Prompt: "a lighthouse at dusk"},
				client.VoiceoverArgs{VoiceID: "ava-warm-narrator", Script: "Every lighthouse has a keeper's log."},
				client.LogoRevealArgs{Image: logo.ID, Prompt: "sparks gather into a burst of light"},
			} {
				g, err := c.CreateGeneration(ctx, args)
				if err != nil {
					t.Fatal(err)
				}
				if g.Status != mediagen.GenerationStatusPending {
					t.Errorf("%s: status %s right after submitting, want pending", args.Feature(), g.Status)
				}
				g, err = poll.Generation(ctx, c, g.ID)
				if err != nil {
					t.Fatal(err)
				}
				if g.Status != mediagen.GenerationStatusDone || g.Output.URL() == "" {
					t.Errorf("%s: status %s, output %q", args.Feature(), g.Status, g.Output.URL())
				}
				t.Logf("%s: %s %s", args.Feature(), g.Kind, g.Output.MIME)
			}

			speech := wav(12 * time.Second) // a clone needs 10 s at least
			sample, err := upload.Reader(ctx, c, bytes.NewReader(speech), int64(len(speech)), "audio/wav")
			if err != nil {
				t.Fatal(err)
			}
			v, err := c.CloneVoice(ctx, client.CloneVoiceParams{Name: "narrator", Audio: sample.ID})
			if err != nil {
				t.Fatal(err)
			}
			v, err = poll.Voice(ctx, c, v.ID)
			if err != nil {
				t.Fatal(err)
			}
			if v.Status != mediagen.VoiceStatusDone {
				t.Errorf("voice clone: status %s", v.Status)
			}

			elapsed := time.Since(start)
			t.Logf("wall time (%s): %s", tc.name, elapsed)
			if elapsed >= 2*time.Second {
				t.Errorf("took %s of wall time, want under 2 s", elapsed)
			}
		})
	}
}

// wav is d of a quiet 8 kHz, 8-bit mono tone.
func wav(d time.Duration) []byte {
	const rate = 8000
	n := int(d / time.Second * rate)
	b := make([]byte, 44+n)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // mono
	binary.LittleEndian.PutUint32(b[24:], rate)
	binary.LittleEndian.PutUint32(b[28:], rate)
	binary.LittleEndian.PutUint16(b[32:], 1)
	binary.LittleEndian.PutUint16(b[34:], 8)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(n))
	for i := range n {
		b[44+i] = byte(128 + 20*((i/10)%2))
	}
	return b
}
`

// v1Face is a user's program on the public names: the models' fields,
// features as values of their own type, and options typed by where they apply.
const v1Face = `package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/upload"
)

func main() {
	ctx := context.Background()
	c, err := client.New("")
	if err != nil {
		log.Fatal(err)
	}
	f, err := upload.File(ctx, c, os.Args[1], upload.WithClientOptions(client.WithTimeout(30*time.Second)))
	if err != nil {
		log.Fatal(err)
	}
	g, err := c.CreateGeneration(ctx, client.RawArgs{FeatureName: "logo-reveal",
		Values: map[string]any{"image": f.ID, "prompt": "sparks", "duration": 3}})
	if err != nil {
		log.Fatal(err)
	}
	var done *mediagen.Generation
	done, err = poll.Generation(ctx, c, g.ID, poll.WithClientOptions(client.WithTimeout(time.Minute)), poll.WithInterval(100*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	if done.Status != mediagen.GenerationStatusDone || done.Output.Video == "" || done.Output.MIME != "video/mp4" {
		log.Fatalf("unexpected generation %+v", done)
	}
	fmt.Println(client.CanonicalFeature(done.Feature), done.Status, done.ID == g.ID, done.Output.Width)
}
`

// writePNG writes a small PNG into dir and returns its path.
func writePNG(t *testing.T, dir, name string) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path
}

// startRefserver runs the reference server command and returns the
// variables it prints; the command stops with the test.
func startRefserver(t *testing.T, bin string, args ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	vars := map[string]string{}
	sc := bufio.NewScanner(stdout)
	for len(vars) < 3 && sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	require.Contains(t, vars, "MEDIAGEN_BASE_URL")
	return vars
}
