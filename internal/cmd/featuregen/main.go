// Command featuregen writes, from the contract, the feature table of package
// feature and the typed arguments of package client: every *Args schema that
// carries an x-feature extension becomes one row of the table, with its
// arguments' types, formats, bounds, defaults and priced variants, and one
// struct named like the schema, documented by its x-sdk-doc extension. It
// refuses a contract whose features disagree with the Feature enum, so the
// code can only say what the contract says.
//
//	go run ./internal/cmd/featuregen -in openapi/openapi.json -table internal/feature/table.gen.go
//	go run ./internal/cmd/featuregen -in openapi/openapi.json -args client/args.gen.go
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	in := flag.String("in", "openapi.json", "the contract")
	table := flag.String("table", "", "the feature table to write")
	args := flag.String("args", "", "the client's typed arguments to write")
	flag.Parse()
	if err := run(*in, *table, *args); err != nil {
		fmt.Fprintln(os.Stderr, "featuregen:", err)
		os.Exit(1)
	}
}

func run(in, table, args string) error {
	spec, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	features, err := read(spec)
	if err != nil {
		return err
	}
	for _, out := range []struct {
		path   string
		render func([]feature) []byte
	}{{table, render}, {args, renderArgs}} {
		if out.path == "" {
			continue
		}
		src, err := format.Source(out.render(features))
		if err != nil {
			return fmt.Errorf("format %s: %w", out.path, err)
		}
		if err := os.WriteFile(out.path, src, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// schema is the part of a JSON schema the table needs.
type schema struct {
	Type                 string            `json:"type"`
	Format               string            `json:"format"`
	Pattern              string            `json:"pattern"`
	Description          string            `json:"description"`
	Required             []string          `json:"required"`
	Properties           json.RawMessage   `json:"properties"`
	Enum                 []string          `json:"enum"`
	Default              any               `json:"default"`
	MinLength            *int              `json:"minLength"`
	MaxLength            *int              `json:"maxLength"`
	Minimum              *int              `json:"minimum"`
	Maximum              *int              `json:"maximum"`
	AdditionalProperties *bool             `json:"additionalProperties"`
	Feature              *featureExt       `json:"x-feature"`
	Variant              *variantExt       `json:"x-variant"`
	Legacy               map[string]string `json:"x-legacy-spellings"`
	EnumVarnames         []string          `json:"x-enum-varnames"`
	SDKDoc               string            `json:"x-sdk-doc"`  // the Go doc of the client's struct
	SDKType              string            `json:"x-sdk-type"` // the client's type of an enum, when not the field's name
	AnyOf                []struct {
		Ref string `json:"$ref"`
	} `json:"anyOf"`
}

type featureExt struct {
	Name, Kind, Legacy, Unit, Tool, ToolDescription string
}

type variantExt struct {
	Keys    map[string]string `json:"keys"`
	Default any               `json:"default"`
}

type feature struct {
	featureExt
	schema   string // the schema's name, which is the client's type name
	constant string // the mediagen constant of Name, e.g. FeatureVideoLogoReveal
	doc      string
	args     []arg
}

type arg struct {
	name string
	schema
	required bool
}

var units = []string{"call", "second", "15s", "1000chars"}

// read collects the features in the order of the create request's anyOf,
// which is the interface document's order.
func read(spec []byte) ([]feature, error) {
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(spec, &doc); err != nil {
		return nil, err
	}
	get := func(name string) (schema, error) {
		var s schema
		raw, ok := doc.Components.Schemas[name]
		if !ok {
			return s, fmt.Errorf("no schema %s", name)
		}
		return s, json.Unmarshal(raw, &s)
	}
	enum, err := get("Feature")
	if err != nil {
		return nil, err
	}
	req, err := get("CreateGenerationRequest")
	if err != nil {
		return nil, err
	}
	var argsProp map[string]schema
	if err := json.Unmarshal(req.Properties, &argsProp); err != nil {
		return nil, err
	}
	var out []feature
	for _, ref := range argsProp["args"].AnyOf {
		name := strings.TrimPrefix(ref.Ref, "#/components/schemas/")
		s, err := get(name)
		if err != nil {
			return nil, err
		}
		f, err := readFeature(name, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		i := slices.Index(enum.Enum, f.Name)
		if i < 0 || !slices.Contains(enum.Enum, f.Legacy) || enum.Legacy[f.Name] != f.Legacy || i >= len(enum.EnumVarnames) {
			return nil, fmt.Errorf("%s: %s and %s must be the Feature enum's spellings", name, f.Name, f.Legacy)
		}
		f.constant = "Feature" + enum.EnumVarnames[i]
		out = append(out, f)
	}
	if len(out) == 0 || 2*len(out) != len(enum.Enum) {
		return nil, fmt.Errorf("%d argument schemas for %d feature spellings", len(out), len(enum.Enum))
	}
	return out, nil
}

func readFeature(name string, s schema) (feature, error) {
	if s.Feature == nil {
		return feature{}, fmt.Errorf("no x-feature")
	}
	f := feature{featureExt: *s.Feature, schema: name, doc: s.SDKDoc}
	kind, _, _ := strings.Cut(f.Name, "/")
	switch {
	case !strings.HasPrefix(f.doc, name+" "):
		return f, fmt.Errorf("x-sdk-doc must start with %s", name)
	case f.Kind != kind:
		return f, fmt.Errorf("kind %q is not the prefix of %q", f.Kind, f.Name)
	case !slices.Contains(units, f.Unit):
		return f, fmt.Errorf("unit %q is not one of %v", f.Unit, units)
	case (f.Tool == "") != (f.ToolDescription == ""):
		return f, fmt.Errorf("a tool needs a name and a description")
	case s.AdditionalProperties == nil || *s.AdditionalProperties:
		return f, fmt.Errorf("additionalProperties must be false: unknown arguments are refused")
	}
	names, err := keys(s.Properties)
	if err != nil {
		return f, err
	}
	var props map[string]schema
	if err := json.Unmarshal(s.Properties, &props); err != nil {
		return f, err
	}
	for _, n := range names {
		a := arg{name: n, schema: props[n], required: slices.Contains(s.Required, n)}
		if err := check(a); err != nil {
			return f, fmt.Errorf("%s: %w", n, err)
		}
		if a.Default == nil && a.Variant != nil {
			a.Default = a.Variant.Default
		}
		f.args = append(f.args, a)
	}
	return f, nil
}

// check refuses what feature.Check could not enforce as the contract says.
func check(a arg) error {
	switch {
	case a.Type == "integer" && (a.Minimum == nil || a.Maximum == nil):
		return fmt.Errorf("an integer needs minimum and maximum")
	case a.Type == "string" && a.Format == "" && a.Enum == nil && (a.MinLength == nil || a.MaxLength == nil):
		return fmt.Errorf("text needs minLength and maxLength")
	case a.Type == "string" && a.Format == "hex-color" && a.Pattern == "":
		return fmt.Errorf("a hex colour needs its pattern")
	case a.Type != "string" && a.Type != "integer" && a.Type != "boolean":
		return fmt.Errorf("type %q is not string, integer or boolean", a.Type)
	case a.Variant != nil && a.Default != nil && fmt.Sprint(a.Variant.Default) != fmt.Sprint(a.Default):
		return fmt.Errorf("x-variant default %v is not the default %v", a.Variant.Default, a.Default)
	}
	return nil
}

// keys returns the keys of a JSON object in their order in the file.
func keys(obj json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var out []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		out = append(out, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func render(features []feature) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by featuregen from openapi/openapi.json; DO NOT EDIT.\n\npackage feature\n\n")
	b.WriteString("import \"regexp\"\n\n")
	b.WriteString("// All lists every feature in the interface document's order.\nvar All = []Info{\n")
	q := strconv.Quote
	for _, f := range features {
		fmt.Fprintf(&b, "{Name: %s, Kind: %s, Legacy: %s, Unit: %s,\n", q(f.Name), q(f.Kind), q(f.Legacy), q(f.Unit))
		if f.Tool != "" {
			fmt.Fprintf(&b, "Tool: %s, ToolDescription: %s,\n", q(f.Tool), q(f.ToolDescription))
		}
		b.WriteString("Args: []Arg{\n")
		for _, a := range f.args {
			fmt.Fprintf(&b, "{Name: %s, Type: %s", q(a.name), q(a.Type))
			if a.Format != "" {
				fmt.Fprintf(&b, ", Format: %s", q(a.Format))
			}
			if a.Pattern != "" {
				fmt.Fprintf(&b, ", Pattern: regexp.MustCompile(%s)", q(a.Pattern))
			}
			if a.required {
				b.WriteString(", Required: true")
			}
			for _, n := range []struct {
				name string
				v    *int
			}{{"MinLength", a.MinLength}, {"MaxLength", a.MaxLength}, {"Minimum", a.Minimum}, {"Maximum", a.Maximum}} {
				if n.v != nil {
					fmt.Fprintf(&b, ", %s: %d", n.name, *n.v)
				}
			}
			if a.Enum != nil {
				fmt.Fprintf(&b, ", Enum: %#v", a.Enum)
			}
			if a.Default != nil {
				fmt.Fprintf(&b, ", Default: %s", literal(a.Default))
			}
			if a.Variant != nil {
				fmt.Fprintf(&b, ", Variant: %#v", a.Variant.Keys)
			}
			fmt.Fprintf(&b, ",\nDescription: %s},\n", q(a.Description))
		}
		b.WriteString("}},\n")
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// literal writes a default as Go: JSON numbers are whole seconds or counts
// in this contract, so an int.
func literal(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case float64:
		return strconv.Itoa(int(x))
	default:
		return fmt.Sprint(x)
	}
}

// comment wraps text as a Go comment of lines up to 80 columns.
func comment(text string) string {
	var b strings.Builder
	line := "//"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 80 && line != "//" {
			b.WriteString(line + "\n")
			line = "//"
		}
		line += " " + w
	}
	b.WriteString(line)
	return b.String()
}
