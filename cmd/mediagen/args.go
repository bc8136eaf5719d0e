package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

// feature checks a FEATURE argument against the features the SDK knows, in
// either spelling, before anything is sent.
func feature(name string) (mediagen.Feature, error) {
	f := mediagen.Feature(name)
	if client.CanonicalFeature(f) == "" {
		names := make([]string, 0, len(client.Features()))
		for _, f := range client.Features() {
			names = append(names, string(f))
		}
		return "", usageErrorf("unknown feature %q; the features are %s", name, strings.Join(names, ", "))
	}
	return f, nil
}

// parseArgs reads --arg values, each NAME=VALUE. A VALUE that parses as
// JSON (a number, true or false, null, an object or an array, a quoted
// string) is sent as that; any other is sent as a string, so
// --arg "prompt=a kite" is a string and --arg duration=8 a number.
// To send a number or a boolean as a string, quote it as JSON:
// --arg 'title="2026"'.
func parseArgs(raw []string) (map[string]any, error) {
	values := map[string]any{}
	for _, kv := range raw {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, usageErrorf("--arg %q: want NAME=VALUE, such as --arg duration=8", kv)
		}
		if _, dup := values[name]; dup {
			return nil, usageErrorf("--arg %s given twice", name)
		}
		var v any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			v = value
		}
		values[name] = v
	}
	return values, nil
}

// fileArg is one --file NAME=PATH: the file at PATH is uploaded and its id
// passed as the argument NAME.
type fileArg struct{ name, path string }

// parseFiles reads --file values and checks that each names a readable
// regular file, so that a typo fails before anything is uploaded or charged.
// taken lists argument names already given with --arg.
func parseFiles(raw []string, taken map[string]any) ([]fileArg, error) {
	var files []fileArg
	for _, kv := range raw {
		name, path, ok := strings.Cut(kv, "=")
		if !ok || name == "" || path == "" {
			return nil, usageErrorf("--file %q: want NAME=PATH, such as --file image=logo.png", kv)
		}
		if _, dup := taken[name]; dup || slices.ContainsFunc(files, func(f fileArg) bool { return f.name == name }) {
			return nil, usageErrorf("argument %s given twice", name)
		}
		if err := checkFile(path); err != nil {
			return nil, err
		}
		files = append(files, fileArg{name, path})
	}
	return files, nil
}

// checkFile fails with a usage error unless path is a regular file that can
// be opened.
func checkFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return usageErrorf("%v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return usageErrorf("%v", err)
	}
	if !st.Mode().IsRegular() {
		return usageErrorf("%s: not a regular file", path)
	}
	return nil
}
