// Package openapi holds the one contract of the media generation service:
// openapi.json, an OpenAPI 3.0.3 description from which the client and the
// reference server are both generated.
//
// Where the interface document is silent, the contract makes a choice and
// marks the schema, property, parameter or response with `x-unconfirmed: true`;
// [Unconfirmed] lists them.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

//go:embed openapi.json
var spec []byte

// Spec returns openapi.json, byte for byte, in a fresh copy: no caller can
// change what another reads.
func Spec() []byte { return bytes.Clone(spec) }

// Unconfirmed returns the JSON pointers (RFC 6901) of every node of [Spec]
// marked `x-unconfirmed: true`, sorted: the choices this contract makes where
// the interface document is silent.
func Unconfirmed() []string {
	var doc any
	if err := json.Unmarshal(spec, &doc); err != nil {
		panic("openapi: embedded openapi.json is not JSON: " + err.Error())
	}
	var out []string
	var walk func(node any, ptr string)
	walk = func(node any, ptr string) {
		switch n := node.(type) {
		case map[string]any:
			if n["x-unconfirmed"] == true {
				out = append(out, ptr)
			}
			for k, v := range n {
				walk(v, ptr+"/"+escape.Replace(k))
			}
		case []any:
			for i, v := range n {
				walk(v, ptr+"/"+strconv.Itoa(i))
			}
		}
	}
	walk(doc, "")
	sort.Strings(out)
	return out
}

// escape escapes a key for a JSON pointer.
var escape = strings.NewReplacer("~", "~0", "/", "~1")
