package examples

import (
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocLinksResolve checks every doc link ([Name], [pkg.Name]) of the
// public packages, as pkg.go.dev renders them: one that names nothing is
// shown as plain brackets, and neither go doc nor go vet says so.
func TestDocLinksResolve(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{range .GoFiles}}{{$.Dir}}/{{.}} {{end}}`, modulePath+"/...").Output()
	require.NoError(t, err)
	sources := map[string][]string{} // the files of each package, by import path
	var public []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		path := fields[0]
		sources[path] = fields[1:]
		if !strings.Contains(path, "/internal/") && !strings.Contains(path, "/examples") {
			public = append(public, path)
		}
	}
	pkgs := map[string]*doc.Package{}
	load := func(path string) *doc.Package {
		if p, ok := pkgs[path]; ok || sources[path] == nil {
			return p
		}
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range sources[path] {
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			require.NoError(t, err)
			files = append(files, f)
		}
		p, err := doc.NewFromFiles(fset, files, path)
		require.NoError(t, err)
		pkgs[path] = p
		return p
	}
	brackets := regexp.MustCompile(`\[\*?[A-Za-z_]\w*(\.\w+)*\]`)
	for _, path := range public {
		p := load(path)
		var check func(where string, text []comment.Text)
		check = func(where string, text []comment.Text) {
			for _, x := range text {
				switch x := x.(type) {
				case comment.Plain:
					assert.Empty(t, brackets.FindAllString(string(x), -1), "%s: %s: a link that names nothing here", path, where)
				case *comment.Link:
					check(where, x.Text)
				case *comment.DocLink:
					// The parser checks links into p; into another package of
					// the module, look the name up there.
					if other := load(x.ImportPath); x.ImportPath != path && other != nil && x.Name != "" {
						name := x.Name
						if x.Recv != "" {
							name = x.Recv + "." + x.Name
						}
						assert.True(t, other.Parser().LookupSym(x.Recv, x.Name), "%s: %s: [%s.%s] names nothing", path, where, x.ImportPath, name)
					}
				}
			}
		}
		for where, text := range docTexts(p) {
			for _, b := range p.Parser().Parse(text).Content {
				switch b := b.(type) {
				case *comment.Paragraph:
					check(where, b.Text)
				case *comment.List:
					for _, item := range b.Items {
						for _, ib := range item.Content {
							if para, ok := ib.(*comment.Paragraph); ok {
								check(where, para.Text)
							}
						}
					}
				}
			}
		}
	}
}

// docTexts maps each documented name of p (and "package") to its comment.
func docTexts(p *doc.Package) map[string]string {
	texts := map[string]string{"package": p.Doc}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			texts[strings.Join(v.Names, ", ")] = v.Doc
		}
	}
	funcs := func(prefix string, fs []*doc.Func) {
		for _, f := range fs {
			texts[prefix+f.Name] = f.Doc
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs("", p.Funcs)
	for _, typ := range p.Types {
		texts[typ.Name] = typ.Doc
		values(typ.Consts)
		values(typ.Vars)
		funcs("", typ.Funcs)
		funcs(typ.Name+".", typ.Methods)
	}
	return texts
}
