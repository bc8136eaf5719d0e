package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/webhook"
)

// delivery is one request a receiver took: the raw request as
// httputil.DumpRequest writes it, and the body.
type delivery struct{ dump, body []byte }

// receiver is a webhook receiver as a user writes one, with the SDK's
// handler in front of a recorder of what it verified.
func receiver(t *testing.T, secret string) (*httptest.Server, chan delivery) {
	t.Helper()
	got := make(chan delivery, 8)
	verified, err := webhook.Handler(secret, func(_ context.Context, _ *webhook.Event) error { return nil })
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dump, err := httputil.DumpRequest(r, true)
		require.NoError(t, err)
		rec := httptest.NewRecorder()
		verified.ServeHTTP(rec, requestFromDump(t, dump))
		if rec.Code == http.StatusOK {
			_, body, err := readDelivery(bytes.NewReader(dump))
			require.NoError(t, err)
			got <- delivery{dump, body}
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func requestFromDump(t *testing.T, dump []byte) *http.Request {
	t.Helper()
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(dump)))
	require.NoError(t, err)
	return req
}

func receive(t *testing.T, got chan delivery) delivery {
	t.Helper()
	select {
	case d := <-got:
		return d
	case <-time.After(20 * time.Second):
		t.Fatal("no verified delivery reached the receiver")
		return delivery{}
	}
}

// keysOf lists the keys of a JSON object, sorted.
func keysOf(v any) []string {
	m, _ := v.(map[string]any)
	return slices.Sorted(maps.Keys(m))
}

// TestTriggerSendsWhatTheServiceSends compares a delivery of trigger with a
// real one of the reference server: the same fields, signed so that the
// SDK's handler takes both, and a real one saved by a receiver verifies.
func TestTriggerSendsWhatTheServiceSends(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mediagen serve")
	}
	srv := startServe(t)
	dir := t.TempDir()
	recv, got := receiver(t, srv.secret)

	r := run(t, dir, srv.env(), "", "generate", "image/generation", "--arg", "prompt=a kite", "--webhook-url", recv.URL+"/hooks")
	requireOK(t, r)
	real := receive(t, got)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "real.http"), real.dump, 0o644))
	r = run(t, dir, srv.env(), "", "verify", "real.http")
	requireOK(t, r)
	assert.Contains(t, r.stdout, "valid: generation.done of gen_")

	r = run(t, dir, srv.env(), "", "trigger", "generation.done", "--forward-to", recv.URL+"/hooks", "--id", "gen_test_1")
	requireOK(t, r)
	assert.Equal(t, "200 OK\n", r.stdout)
	test := receive(t, got)

	realBody, testBody := decode[map[string]any](t, string(real.body)), decode[map[string]any](t, string(test.body))
	assert.Equal(t, keysOf(realBody), keysOf(testBody))
	assert.Equal(t, realBody["event"], testBody["event"])
	realGen, testGen := realBody["generation"].(map[string]any), testBody["generation"].(map[string]any)
	assert.Equal(t, keysOf(realGen), keysOf(testGen))
	assert.Equal(t, keysOf(realGen["output"]), keysOf(testGen["output"]))
	assert.Equal(t, "gen_test_1", testGen["id"])
	assert.Equal(t, "done", testGen["status"])
	for _, h := range []string{"Content-Type", webhook.HeaderTimestamp, webhook.HeaderSignature} {
		assert.Contains(t, string(test.dump), h+": ", "the delivery carries %s", h)
	}

	// The other events: a failed generation, and voice events.
	r = run(t, dir, srv.env(), "", "trigger", "generation.timeout", "--forward-to", recv.URL+"/hooks", "--feature", "video/avatar", "--json")
	requireOK(t, r)
	assert.Equal(t, 200.0, decode[map[string]any](t, r.stdout)["status"])
	gen := decode[map[string]any](t, string(receive(t, got).body))["generation"].(map[string]any)
	assert.Equal(t, "timeout", gen["status"])
	assert.Equal(t, "video", gen["kind"])
	assert.NotContains(t, gen, "output")
	r = run(t, dir, srv.env(), "", "trigger", "voice.done", "--forward-to", recv.URL+"/hooks", "--id", "voice_1")
	requireOK(t, r)
	voice := decode[map[string]any](t, string(receive(t, got).body))["voice"].(map[string]any)
	assert.Equal(t, "voice_1", voice["id"])
	assert.Equal(t, "done", voice["status"])
}

// TestTriggerFailures: a receiver that refuses, is down or is too slow.
func TestTriggerFailures(t *testing.T) {
	dir := t.TempDir()
	recv, _ := receiver(t, "whsec_right")

	r := run(t, dir, nil, "", "trigger", "generation.done", "--forward-to", recv.URL, "--secret", "whsec_wrong")
	assert.Equal(t, exitOther, r.code, r.stderr)
	assert.Equal(t, "401 Unauthorized\nUnauthorized\n", r.stdout, "the receiver's answer")
	assert.Equal(t, "mediagen: the receiver answered 401 Unauthorized; the service would retry once after 2 s, then drop the delivery\n", r.stderr)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := "http://" + ln.Addr().String() + "/hooks"
	ln.Close()
	r = run(t, dir, []string{"MEDIAGEN_WEBHOOK_SECRET=whsec_right"}, "", "trigger", "generation.done", "--forward-to", down)
	requireFailure(t, r, exitService, "the receiver at "+down+" cannot be reached: dial tcp")

	if testing.Short() {
		return
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(6 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	r = run(t, dir, nil, "", "trigger", "generation.done", "--forward-to", slow.URL, "--secret", "s")
	requireFailure(t, r, exitOther, "did not answer within 5s, the service's window")

	// Ctrl-C while the receiver thinks: interrupted, not a receiver out of reach.
	code, stderr := interrupt(t, command(t, dir, nil, "trigger", "generation.done", "--forward-to", slow.URL, "--secret", "s"), 500*time.Millisecond)
	assert.Equal(t, exitInterrupted, code, stderr)
	assert.Equal(t, "mediagen: interrupted\n", stderr)
}

// TestVerify checks saved deliveries: as trigger --save writes them, with a
// wrong secret, tampered with, too old, and signed twice during a rotation.
func TestVerify(t *testing.T) {
	dir := t.TempDir()
	env := []string{"MEDIAGEN_WEBHOOK_SECRET=whsec_a"}
	r := run(t, dir, env, "", "trigger", "voice.error", "--id", "voice_9", "--save", "d.http")
	requireOK(t, r)
	assert.Empty(t, r.stdout, "only written")
	saved, err := os.ReadFile(filepath.Join(dir, "d.http"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(saved), "POST /webhooks HTTP/1.1\r\n"), string(saved))

	r = run(t, dir, env, string(saved), "verify")
	requireOK(t, r)
	assert.Regexp(t, `^valid: voice\.error of voice_9, signed \d{4}-`, r.stdout)
	r = run(t, dir, nil, "", "verify", "d.http", "--secret", "whsec_a", "--json")
	requireOK(t, r)
	out := decode[map[string]any](t, r.stdout)
	assert.Equal(t, true, out["valid"])
	assert.Equal(t, "voice.error", out["event"])
	assert.Equal(t, "voice_9", out["id"])

	r = run(t, dir, nil, string(saved), "verify", "--secret", "whsec_b")
	requireFailure(t, r, exitOther, "not valid: webhook: no valid signature")
	tampered := strings.Replace(string(saved), "voice_9", "voice_8", 1)
	requireFailure(t, run(t, dir, env, tampered, "verify", "-"), exitOther, "no valid signature")

	// Saved ten minutes ago, signed with the new and the old secret.
	req, body, err := readDelivery(bytes.NewReader(saved))
	require.NoError(t, err)
	webhook.SetHeaders(req.Header, []string{"whsec_new", "whsec_a"}, time.Now().Add(-10*time.Minute), body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	var old bytes.Buffer
	require.NoError(t, req.Write(&old))
	r = run(t, dir, env, old.String(), "verify")
	requireFailure(t, r, exitOther, "timestamp too old")
	assert.Contains(t, r.stderr, "--ignore-age")
	requireOK(t, run(t, dir, env, old.String(), "verify", "--ignore-age"))
	requireOK(t, run(t, dir, nil, old.String(), "verify", "--secret", "whsec_new", "--tolerance", "1h"))
}

// TestVerifyBadTolerance checks that a --tolerance the check cannot use is
// a usage error (2), not a verdict on a valid delivery (1, "not valid").
func TestVerifyBadTolerance(t *testing.T) {
	dir := t.TempDir()
	env := []string{"MEDIAGEN_WEBHOOK_SECRET=whsec_a"}
	requireOK(t, run(t, dir, env, "", "trigger", "generation.done", "--save", "d.http"))
	for _, tolerance := range []string{"0s", "-1m0s"} {
		r := run(t, dir, env, "", "verify", "d.http", "--tolerance", tolerance)
		requireFailure(t, r, exitUsage, "--tolerance "+tolerance+": want a positive duration")
	}
}
