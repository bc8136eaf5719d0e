package refserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/refserver/fault"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// The fuzz targets of this package share one server per target and process
// (a fuzzing worker runs one input at a time) with fixtures, restored after
// any input that changed its state, so every input meets the fixture state
// whatever ran before it: a verdict never depends on history. A new server
// per input would cost milliseconds (the agent endpoint's tool schemas);
// most inputs are refused or only read.
//
// The restore runs at the end of the input that caused it, and the server
// runs no background goroutine (it is closed once built; requests settle
// lazily), so an input's coverage depends on neither the input before it
// nor a ticker: coverage the engine cannot reproduce makes it minimize in
// vain instead of fuzzing.
//
// Inputs name the fixtures by placeholders, which fuzzEnv.expand replaces
// with the ids and signed URLs of the current server:
//
//	KEYA, KEYB        the API keys of two projects (KEYB's balance is 0.05)
//	IMAGEID           a whole PNG of project A
//	BADIMAGEID        the same PNG cut to 64 bytes
//	AUDIOID           a 12-second WAV voice sample
//	GENID             a finished generation of project A
//	VOICEID           a trained voice clone of project A
//	UPLOADID          a file reserved for a signed upload of a 64-byte PNG
//	UPLOADURL         the path and query of that signed PUT
//	ASSETURL          the path and query of GENID's signed output
//	UPLOADPATH, UPLOADEXP, UPLOADSIG, ASSETPATH, ASSETEXP, ASSETSIG
//	                  the path, expires and signature of those two URLs
const (
	fuzzKeyA = "fuzz-key-a"
	fuzzKeyB = "fuzz-key-b"
)

type fuzzEnv struct {
	srv   *Server
	tc    http.Handler
	clock *FakeClock
	subst *strings.Replacer
	ids   map[string]string // placeholder -> what it stands for

	// signed holds the storage URLs the fixtures were given (path and
	// query): the only ones a request may succeed with.
	signed []*url.URL

	fixture string // state() right after the fixtures were made
}

// fuzzHost holds a fuzz target's server.
type fuzzHost struct{ e *fuzzEnv }

// newFuzzHost builds the server before the first input, so that no input
// is charged with the first build's coverage.
func newFuzzHost(f *testing.F) *fuzzHost { return &fuzzHost{newFuzzEnv(f)} }

// env returns the server in its fixture state for input t, and restores
// that state when t is done if t changed it.
func (h *fuzzHost) env(t *testing.T) *fuzzEnv {
	e := h.e
	t.Cleanup(func() {
		if e.state() != e.fixture {
			e.reset(t)
		}
	})
	return e
}

// fuzzMedia returns the fixture PNG and WAV, made once per process.
var fuzzMedia = sync.OnceValues(func() ([]byte, []byte) {
	return media.PNG(64, 48, "fuzz"), media.WAV(12*time.Second, "fuzz")
})

func newFuzzEnv(t testing.TB) *fuzzEnv {
	e := &fuzzEnv{clock: NewFakeClock(testStart)}
	e.srv = New(WithClock(e.clock), WithoutWebhookDelivery(), WithFaults(fault.Config{}))
	e.srv.Close() // no ticker: requests settle on their own
	e.tc = e.srv.TestControl()
	e.populate(t)
	return e
}

// reset empties the server in place and makes the fixtures again: a new
// server costs about 5 ms (the agent endpoint's tool schemas), ten times
// the fixtures, and inputs that change the state are common. It clears
// every field New fills with rows or that a request can change; a field
// added to Server must be added here.
func (e *fuzzEnv) reset(t testing.TB) {
	s := e.srv
	e.clock.Advance(testStart.Sub(e.clock.Now()))
	require.NoError(t, s.faults.SetConfig(fault.Config{}))
	s.retired.mu.Lock()
	s.retired.ids = nil
	s.retired.mu.Unlock()
	s.mu.Lock()
	s.projects, s.gens, s.files, s.clones = map[string]*project{}, map[string]*generation{}, map[string]*file{}, map[string]*clone{}
	s.training, s.favorites, s.pending = map[*clone]struct{}{}, map[string]map[string]bool{}, map[string]bool{}
	s.seq, s.timers = 0, timers{}
	s.mu.Unlock()
	e.populate(t)
}

// populate adds the projects and makes the fixtures the placeholders name.
func (e *fuzzEnv) populate(t testing.TB) {
	e.srv.AddProject(fuzzKeyA, 100)
	e.srv.AddProject(fuzzKeyB, 0.05)
	e.signed = nil
	call := func(method, target, contentType string, body []byte) []byte {
		rec := e.serve(method, target, http.Header{"Authorization": {fuzzKeyA}, "Content-Type": {contentType}}, body)
		require.Less(t, rec.Code, 300, "%s %s: %s", method, target, rec.Body)
		return rec.Body.Bytes()
	}
	upload := func(name string, data []byte) string {
		ct, body := multipartBody(t, map[string][]byte{name: data}, []string{name}, nil)
		var out api.FileList
		require.NoError(t, json.Unmarshal(call(http.MethodPost, "/v3/files/upload", ct, body.Bytes()), &out))
		return out.Files[0].ID
	}
	png, wav := fuzzMedia()
	img, bad := upload("logo.png", png), upload("cut.png", png[:64])
	sample := upload("voice.wav", wav)

	var g api.GenerationEnvelope
	require.NoError(t, json.Unmarshal(call(http.MethodPost, "/v3/generations", "application/json",
		[]byte(`{"feature": "image/ad", "args": {"image": "`+img+`", "prompt": "a fixture"}}`)), &g))
	var v api.VoiceEnvelope
	require.NoError(t, json.Unmarshal(call(http.MethodPost, "/v3/voices", "application/json",
		[]byte(`{"name": "fixture", "audio": "`+sample+`"}`)), &v))
	e.clock.Advance(time.Minute)
	e.srv.Settle()
	var u mediagen.UploadURL
	require.NoError(t, json.Unmarshal(call(http.MethodPost, "/v3/files/upload-url", "application/json",
		[]byte(`{"bytes": 64, "contentType": "image/png"}`)), &u))
	require.NoError(t, json.Unmarshal(call(http.MethodGet, "/v3/generations/"+g.Generation.ID, "", nil), &g))
	require.Equal(t, mediagen.GenerationStatusDone, g.Generation.Status)

	for _, raw := range []string{u.UploadURL, g.Generation.Output.Image} {
		parsed, err := url.Parse(raw)
		require.NoError(t, err)
		e.signed = append(e.signed, parsed)
	}
	// In this order, so that BADIMAGEID is not read as BAD and IMAGEID.
	pairs := []string{
		"KEYA", fuzzKeyA, "KEYB", fuzzKeyB,
		"BADIMAGEID", bad, "IMAGEID", img, "AUDIOID", sample,
		"GENID", g.Generation.ID, "VOICEID", v.Voice.ID, "UPLOADID", u.File.ID,
		"UPLOADURL", e.signed[0].RequestURI(), "ASSETURL", e.signed[1].RequestURI(),
		"UPLOADPATH", e.signed[0].Path, "UPLOADEXP", e.signed[0].Query().Get("expires"), "UPLOADSIG", e.signed[0].Query().Get("signature"),
		"ASSETPATH", e.signed[1].Path, "ASSETEXP", e.signed[1].Query().Get("expires"), "ASSETSIG", e.signed[1].Query().Get("signature"),
	}
	e.subst = strings.NewReplacer(pairs...)
	e.ids = map[string]string{}
	for i := 0; i < len(pairs); i += 2 {
		e.ids[pairs[i]] = pairs[i+1]
	}
	e.fixture = e.state()
}

// state summarizes what any input could change: money, secrets, rows and
// their states, favourites, retired voices, faults and the clock. Equal
// summaries mean the same answers to the same requests. Rows are summed
// as hashes rather than sorted, so the work does not depend on map order
// (sorting would make an input's coverage vary from run to run).
func (e *fuzzEnv) state() string {
	s := e.srv
	var rows uint64
	row := func(format string, args ...any) {
		h := fnv.New64a()
		fmt.Fprintf(h, format, args...)
		rows += h.Sum64()
	}
	s.retired.mu.RLock()
	retired := len(s.retired.ids)
	s.retired.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, p := range s.projects {
		row("project %s %d %s %s %d", k, p.balance, p.secret, p.previous, len(s.favorites[p.id]))
	}
	for id, g := range s.gens {
		row("gen %s %s %t", id, g.status, g.deleted)
	}
	for id, c := range s.clones {
		row("clone %s %s", id, c.status)
	}
	for id, f := range s.files {
		row("file %s %s %s", id, f.landed, f.mediaType)
	}
	return fmt.Sprintf("clock %s faults %+v retired %d rows %d/%d/%d/%d %x",
		e.clock.Now(), s.faults.Config(), retired, len(s.projects), len(s.gens), len(s.clones), len(s.files), rows)
}

// expand replaces the fixture placeholders in s.
func (e *fuzzEnv) expand(s string) string { return e.subst.Replace(s) }

// balances returns every project's balance in units.
func (e *fuzzEnv) balances() map[string]int64 {
	e.srv.mu.Lock()
	defer e.srv.mu.Unlock()
	out := map[string]int64{}
	for k, p := range e.srv.projects {
		out[k] = p.balance
	}
	return out
}

// serve runs one request through the handler a command would route it to:
// the test-control API for its paths, the server for the rest.
func (e *fuzzEnv) serve(method, target string, header http.Header, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequestWithContext(context.Background(), method, target, bytes.NewReader(body))
	req.Host = "refserver.test"
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Length", strconv.Itoa(len(body)))
	rec := httptest.NewRecorder()
	if IsTestControlPath(req.URL.Path) {
		e.tc.ServeHTTP(rec, req)
	} else {
		e.srv.ServeHTTP(rec, req)
	}
	return rec
}

// fuzzRequest turns fuzz input into a request a real HTTP server could have
// parsed: ok is false when no server would have let it through (a bad
// method, target or header), since such input never reaches a handler.
// Placeholders are expanded everywhere. Headers come one per line as
// "Name: value". A Content-Length shorter than the expanded body cuts it,
// as a server reads no further.
func fuzzRequest(e *fuzzEnv, method, target, headers string, body []byte) (string, string, http.Header, []byte, bool) {
	method, target, body = e.expand(method), e.expand(target), []byte(e.expand(string(body)))
	if method == "" || strings.IndexFunc(method, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
		return "", "", nil, nil, false
	}
	if !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \t\r\n#") {
		return "", "", nil, nil, false
	}
	if _, err := url.ParseRequestURI(target); err != nil {
		return "", "", nil, nil, false
	}
	h := http.Header{}
	for line := range strings.SplitSeq(e.expand(headers), "\n") {
		name, value, ok := strings.Cut(line, ":")
		value = strings.Trim(value, " \t") // what net/http trims
		if !ok || name == "" || strings.IndexFunc(name, func(r rune) bool { return !isTokenChar(r) }) >= 0 ||
			strings.IndexFunc(value, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) >= 0 {
			continue
		}
		switch http.CanonicalHeaderKey(name) {
		case "Content-Length":
			if n, err := strconv.Atoi(value); err == nil && n >= 0 && n < len(body) {
				body = body[:n]
			}
			continue
		case "Host", "Transfer-Encoding", "Connection", "Expect":
			continue // the server's own framing
		}
		h.Add(name, value)
	}
	return method, target, h, body, true
}

// isTokenChar reports whether r may appear in an HTTP token.
func isTokenChar(r rune) bool {
	return r < 0x7f && r > ' ' && !strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
}
