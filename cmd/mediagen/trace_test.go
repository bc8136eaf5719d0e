package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// span is what the test reads of a span the stdout exporter printed.
type span struct {
	Name        string
	SpanContext struct{ SpanID string }
	Parent      struct{ SpanID string }
	Attributes  []struct {
		Key   string
		Value struct{ Value any }
	}
}

func (s span) attr(key string) any {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.Value
		}
	}
	return nil
}

// spans decodes the lines --trace printed and checks that they are one
// trace: the command's span its root, no span an orphan.
func spans(t *testing.T, printed string) map[string]span {
	t.Helper()
	byName := map[string]span{}
	ids := map[string]bool{}
	var all []span
	for _, line := range strings.Split(strings.TrimSpace(printed), "\n") {
		s := decode[span](t, line)
		all = append(all, s)
		byName[s.Name] = s
		ids[s.SpanContext.SpanID] = true
	}
	roots := 0
	for _, s := range all {
		if strings.Trim(s.Parent.SpanID, "0") == "" {
			roots++
			continue
		}
		assert.True(t, ids[s.Parent.SpanID], "orphan span %s", s.Name)
	}
	assert.Equal(t, 1, roots, "one root")
	return byName
}

// TestTrace: --trace prints a generate+wait run's spans on stderr when it
// ends, --trace=FILE into a file; the job span carries the generation's
// id, and no API key is printed anywhere.
func TestTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mediagen serve")
	}
	srv := startServe(t)
	dir := t.TempDir()

	r := run(t, dir, srv.env(), "", "generate", "image/generation", "--arg", "prompt=a lighthouse", "--wait", "--json", "--trace")
	require.Equal(t, 0, r.code, r.stderr)
	id := decode[map[string]any](t, r.stdout)["id"].(string)
	got := spans(t, r.stderr)
	job, ok := got["mediagen.generation"]
	require.True(t, ok, "no job span in %s", r.stderr)
	assert.Equal(t, id, job.attr("mediagen.generation.id"))
	assert.Equal(t, "done", job.attr("mediagen.status"))
	assert.Equal(t, "poll", job.attr("mediagen.wait.ended_by"))
	assert.Equal(t, got["mediagen generate"].SpanContext.SpanID, job.Parent.SpanID, "the job is the command's child")
	assert.Contains(t, got, "mediagen.wait")
	assert.Contains(t, got, "POST")
	assert.NotContains(t, r.stdout+r.stderr, srv.key)

	// Into a file, with the key given as a flag: stderr stays empty.
	env := []string{"MEDIAGEN_BASE_URL=" + srv.base}
	r = run(t, dir, env, "", "--api-key", srv.key, "wait", id, "--json", "--trace=trace.jsonl")
	requireOK(t, r)
	b, err := os.ReadFile(filepath.Join(dir, "trace.jsonl"))
	require.NoError(t, err)
	got = spans(t, string(b))
	assert.Contains(t, got, "mediagen wait")
	assert.Equal(t, id, got["mediagen.wait"].attr("mediagen.generation.id"))
	assert.NotContains(t, string(b)+r.stdout, srv.key)

	// A --trace file that cannot be made is a usage error, before any work.
	r = run(t, dir, srv.env(), "", "get", id, "--trace="+filepath.Join(dir, "no", "such", "dir", "t.jsonl"))
	requireFailure(t, r, exitUsage, "--trace")
}
