package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

// saveOutput saves the outputs of g into dir as client.SaveOutput does, but
// under fileName(g.ID): SaveOutput's own cleaning gives ids such as "a/b"
// and "a b" the same file, and the second save overwrites the first.
func saveOutput(ctx context.Context, c *client.Client, g *mediagen.Generation, dir string) (*client.SavedOutput, error) {
	named := *g
	// Letters, digits, '-' and '_' only: SaveOutput names the files
	// <named.ID><ext> and <named.ID>.poster<ext> without changing it.
	named.ID = fileName(g.ID)
	return c.SaveOutput(ctx, &named, dir)
}

// maxKept is the most characters of an id a file name keeps.
const maxKept = 100

// fileName is the name, before the extension, that the outputs of the
// generation id are saved under. It is id itself when id is lower-case
// letters, digits, '-' and '_' only (as the service's ids are); otherwise
// id with upper-case letters lowered and other characters replaced by '_',
// cut to maxKept, then '-' and 16 hex digits of the SHA-256 of id.
//
// Distinct ids get distinct names, also where file names ignore case: a
// name kept as is never ends like a hashed one (such an id is hashed too),
// and hashed names differ by their hash. A name has no separator and no
// dot, so it stays in its folder and ".poster" cannot make it another's.
func fileName(id string) string {
	var b strings.Builder
	changed := false
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r - 'A' + 'a')
			changed = true
		default:
			b.WriteByte('_')
			changed = true
		}
	}
	name := b.String()
	if !changed && name != "" && len(name) <= maxKept && !endsHashed(name) {
		return name
	}
	if len(name) > maxKept {
		name = name[:maxKept]
	}
	if name == "" {
		name = "_" // not "-<hash>": a leading '-' reads as an option in a shell
	}
	sum := sha256.Sum256([]byte(id))
	return name + "-" + hex.EncodeToString(sum[:8])
}

// endsHashed reports whether name ends as fileName's hashed names do.
func endsHashed(name string) bool {
	const n = 16
	if len(name) < n+1 || name[len(name)-n-1] != '-' {
		return false
	}
	for _, c := range name[len(name)-n:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
