package main

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client/clienttest"
)

// TestUsageErrors runs command lines that are wrong before anything is
// sent: each exits 2 with one line on stderr, without a server to talk to.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	logo(t, dir)
	writeFile(t, dir, "orders.jsonl", []byte(`{"key": "k", "feature": "image/generation", "args": {"prompt": "a kite"}}`+"\n"))
	env := []string{"MEDIAGEN_BASE_URL=http://127.0.0.1:1", "MEDIAGEN_API_KEY=k"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"price", "--nope"}, "unknown flag: --nope"},
		{[]string{"generate"}, "accepts 1 arg(s), received 0"},
		{[]string{"generate", "image/nope", "--arg", "prompt=x"}, `unknown feature "image/nope"; the features are image/self-portrait`},
		{[]string{"estimate", "nope"}, `unknown feature "nope"`},
		{[]string{"price", "nope"}, `unknown feature "nope"`},
		{[]string{"list", "--feature", "nope"}, `unknown feature "nope"`},
		{[]string{"generate", "image/generation", "--arg", "prompt"}, `--arg "prompt": want NAME=VALUE`},
		{[]string{"generate", "image/generation", "--arg", "prompt=a", "--arg", "prompt=b"}, "--arg prompt given twice"},
		{[]string{"generate", "video/logo-reveal", "--arg", "prompt=x", "--file", "image=missing.png"}, "open missing.png: no such file or directory"},
		{[]string{"generate", "video/logo-reveal", "--arg", "prompt=x", "--file", "image"}, `--file "image": want NAME=PATH`},
		{[]string{"generate", "video/logo-reveal", "--arg", "image=x", "--file", "image=logo.png"}, "argument image given twice"},
		{[]string{"generate", "video/logo-reveal", "--file", "image=" + dir}, "not a regular file"},
		{[]string{"upload", "logo.png", "missing.png"}, "open missing.png: no such file or directory"},
		{[]string{"voices", "--owner", "everyone"}, `--owner "everyone": want service or project`},
		{[]string{"voices", "clone", "Me"}, "--audio FILE is required"},
		{[]string{"voices", "clone", "Me", "--audio", "missing.wav"}, "open missing.wav"},
		{[]string{"trigger", "generation.finished", "--forward-to", "http://127.0.0.1:1/"}, `unknown event "generation.finished"`},
		{[]string{"trigger", "generation.done", "--secret", "s"}, "--forward-to URL is required"},
		{[]string{"trigger", "generation.done", "--forward-to", "http://127.0.0.1:1/"}, "no signing secret: pass --secret or set MEDIAGEN_WEBHOOK_SECRET"},
		{[]string{"trigger", "generation.done", "--forward-to", "ftp://x/", "--secret", "s"}, "want an http or https URL"},
		{[]string{"verify", "--secret", "s", "missing.http"}, "open missing.http"},
		{[]string{"listen", "--secret", "s"}, "unknown flag: --secret"},
		{[]string{"listen", "--webhook-secret", "s"}, "--forward-to URL is required"},
		{[]string{"listen", "--forward-to", "ftp://x/", "--webhook-secret", "s"}, `--forward-to "ftp://x/": want an http or https URL`},
		{[]string{"listen", "--forward-to", "localhost:8000/hooks", "--webhook-secret", "s"}, "want an http or https URL"},
		{[]string{"listen", "--forward-to", "http://127.0.0.1:1/"}, "no signing secret: pass --webhook-secret or set MEDIAGEN_WEBHOOK_SECRET"},
		{[]string{"listen", "--forward-to", "http://127.0.0.1:1/", "--webhook-secret", "s", "--events", "generation.done,voice.finished"}, `--events: unknown event "voice.finished"`},
		{[]string{"listen", "--forward-to", "http://127.0.0.1:1/", "--webhook-secret", "s", "--interval", "0s"}, "--interval 0s: want at least 100ms"},
		{[]string{"listen", "extra", "--forward-to", "http://127.0.0.1:1/", "--webhook-secret", "s"}, `unknown command "extra"`},
		{[]string{"wait", "gen_1", "--max-wait", "-1s"}, "--max-wait -1s: want a positive duration"},
		{[]string{"generate", "image/generation", "--arg", "prompt=x", "--max-wait", "-1s"}, "--max-wait -1s: want a positive duration"},
		{[]string{"batch", "orders.jsonl", "--concurrency", "0"}, "--concurrency 0: want at least 1"},
		{[]string{"batch", "orders.jsonl", "--budget", "-1"}, "--budget -1: want an amount of USD, 0 or more"},
		{[]string{"batch", "orders.jsonl", "--fit-budget"}, "--fit-budget needs --budget"},
		{[]string{"batch", "orders.jsonl", "--detach"}, "--detach needs --queue"},
		{[]string{"batch", "orders.jsonl", "--queue", "sqlite:q.db", "--concurrency", "4"}, "--concurrency does not apply with --queue"},
		{[]string{"batch", "orders.jsonl", "--queue", "sqlite:q.db", "--journal", "j.db"}, "--journal does not apply with --queue"},
		{[]string{"batch", "orders.jsonl", "--queue", "sqlite:q.db", "--budget", "5", "--fit-budget"}, "--fit-budget does not apply with --queue"},
		{[]string{"batch", "orders.jsonl", "--queue", "", "--detach"}, "--queue: want a PostgreSQL URL or sqlite:PATH"},
		{[]string{"batch", "orders.jsonl", "--queue", "sqlite:", "--detach"}, "--queue: want a PostgreSQL URL or sqlite:PATH"},
		{[]string{"worker", "--queue", "sqlite:"}, "--queue: want a PostgreSQL URL or sqlite:PATH"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			requireFailure(t, run(t, dir, env, "", tc.args...), exitUsage, tc.want)
		})
	}
	t.Run("no base URL", func(t *testing.T) {
		requireFailure(t, run(t, dir, []string{"MEDIAGEN_API_KEY=k"}, "", "price"), exitUsage, "no base URL: set MEDIAGEN_BASE_URL or pass --base-url")
	})
	t.Run("not a delivery", func(t *testing.T) {
		requireFailure(t, run(t, dir, nil, "garbage\n", "verify", "--secret", "s"), exitUsage, "stdin is not a saved delivery")
	})
}

// TestHelp checks that help exits 0 on stdout, for the command and each
// subcommand, and that no help shows the API key of the environment.
func TestHelp(t *testing.T) {
	const key = "mg_live_do_not_print_me"
	env := []string{"MEDIAGEN_API_KEY=" + key, "MEDIAGEN_BASE_URL=http://127.0.0.1:1"}
	for _, args := range [][]string{
		{"--help"}, {"help"}, {"generate", "--help"}, {"price", "-h"}, {"voices", "clone", "--help"},
		{"templates", "prompt", "--help"}, {"trigger", "--help"}, {"verify", "--help"}, {"listen", "--help"}, {"serve", "--help"}, {"serve", "-h"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := run(t, t.TempDir(), env, "", args...)
			requireOK(t, r)
			assert.Contains(t, r.stdout, "Usage:")
			assert.NotContains(t, r.stdout, key)
		})
	}
	r := run(t, t.TempDir(), env, "", "--help")
	for _, want := range []string{"serve", "price", "estimate", "generate", "batch", "get", "list", "wait", "download", "delete", "upload", "voices", "templates", "trigger", "verify", "listen", "--json", "--api-key", "--base-url", "Exit codes"} {
		assert.Contains(t, r.stdout, want)
	}
	r = run(t, t.TempDir(), env, "", "serve", "--help")
	assert.Contains(t, r.stdout, "Usage: mediagen serve [flags]")
	for _, flag := range []string{"-addr", "-api-key", "-test-control", "-allow-http-webhooks", "-export", "-fault-http"} {
		assert.Regexp(t, `(?m)^  `+flag+`( |$)`, r.stdout, "serve --help lists %s", flag)
	}
}

// TestServeFlags checks the flags of `mediagen serve`: refserver's, with one
// dash or two; a bad one exits 2 with package flag's message and the usage.
func TestServeFlags(t *testing.T) {
	r := run(t, t.TempDir(), nil, "", "serve", "--nope")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "flag provided but not defined: -nope\nUsage: mediagen serve [flags]")
	assert.Empty(t, r.stdout)
	r = run(t, t.TempDir(), nil, "", "serve", "-render-scale", "0")
	assert.Equal(t, exitOther, r.code)
	assert.Equal(t, "mediagen: -render-scale must be positive\n", r.stderr)
	r = run(t, t.TempDir(), nil, "", "serve", "-addr", "127.0.0.1:0", "extra")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, `unexpected argument "extra"`)
	// Any other failure is 1, as its help says, even a network error.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	r = run(t, t.TempDir(), nil, "", "serve", "-addr", ln.Addr().String())
	assert.Equal(t, exitOther, r.code, r.stderr)
	assert.Contains(t, r.stderr, "address already in use")

	if testing.Short() {
		return
	}
	// Single dashes, as refserver's users type them, and a key of our own.
	srv := startServe(t, "-api-key", "K", "-balance", "7")
	assert.Equal(t, "K", srv.key)
	assert.True(t, strings.HasPrefix(srv.secret, "whsec_"), srv.secret)
	assert.Equal(t, srv.base+"/test/v1", srv.control)
	assert.Equal(t, 7.0, srv.balance(t))
}

// TestExitCodes checks that the exit code says what failed, each with one
// line on stderr that never shows the API key.
func TestExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mediagen serve")
	}
	dir := t.TempDir()
	srv := startServe(t)

	t.Run("no key", func(t *testing.T) {
		r := run(t, dir, []string{"MEDIAGEN_BASE_URL=" + srv.base}, "", "price")
		requireFailure(t, r, exitAuth, "no API key: set MEDIAGEN_API_KEY or pass --api-key")
	})
	t.Run("wrong key", func(t *testing.T) {
		const key = "mg_live_wrong_and_secret"
		r := run(t, dir, []string{"MEDIAGEN_BASE_URL=" + srv.base}, "", "--api-key", key, "list")
		requireFailure(t, r, exitAuth, "401 unauthorized")
		assert.NotContains(t, r.stderr, key)
	})
	t.Run("not found", func(t *testing.T) {
		requireFailure(t, run(t, dir, srv.env(), "", "get", "gen_nope"), exitNotFound, `generation "gen_nope" not found`)
		requireFailure(t, run(t, dir, srv.env(), "", "download", "gen_nope"), exitNotFound, "404")
		requireFailure(t, run(t, dir, srv.env(), "", "templates", "prompt", "pvw_nope"), exitNotFound, "404")
		requireFailure(t, run(t, dir, srv.env(), "", "voices", "delete", "ava-warm-narrator"), exitNotFound, "404")
	})
	t.Run("balance", func(t *testing.T) {
		srv.setBalance(t, 0.01)
		defer srv.setBalance(t, 100)
		r := run(t, dir, srv.env(), "", "generate", "image/generation", "--arg", "prompt=a kite")
		requireFailure(t, r, exitBalance, "402 insufficient_balance: this call costs 0.04 USD; the balance is 0.01 USD")
		assert.Equal(t, 0.01, srv.balance(t))
	})
	t.Run("service", func(t *testing.T) {
		faulty := startServe(t, "--fault-http", "1", "--fault-statuses", "500")
		requireFailure(t, run(t, dir, faulty.env(), "", "price"), exitService, "500")
	})
	t.Run("network", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		closed := "http://" + ln.Addr().String()
		ln.Close()
		r := run(t, dir, []string{"MEDIAGEN_BASE_URL=" + closed, "MEDIAGEN_API_KEY=k"}, "", "price")
		requireFailure(t, r, exitService, "connection refused")
	})
	t.Run("failed generation", func(t *testing.T) {
		_, env := inProcess(t, clienttest.WithOutcome(func(mediagen.Feature) clienttest.Outcome { return clienttest.OutcomeError }))
		r := run(t, dir, env, "", "generate", "image/generation", "--arg", "prompt=a kite", "--wait")
		assert.Equal(t, exitOther, r.code, r.stderr)
		assert.Contains(t, r.stdout, "STATUS")
		assert.Regexp(t, `(?m)^STATUS\s+error$`, r.stdout, "the failed generation is shown")
		assert.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
		assert.Contains(t, r.stderr, "error")
	})
}

// TestBadInputChargesNothing submits what the service must refuse (the
// client refuses what the contract rules out with the service's message
// before sending): each exits 2 with one line, and the balance and the list
// are as before.
func TestBadInputChargesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mediagen serve")
	}
	dir := t.TempDir()
	logo(t, dir)
	srv := startServe(t)
	before := srv.balance(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"generate", "video/logo-reveal", "--file", "image=logo.png", "--arg", "prompt=x", "--arg", "duration=abc"}, "invalid argument: args.duration must be an integer from 3 to 10"},
		{[]string{"generate", "video/logo-reveal", "--file", "image=logo.png", "--arg", "prompt=x", "--arg", "duration=99"}, "invalid argument: args.duration must be an integer from 3 to 10"},
		{[]string{"generate", "video/logo-reveal", "--file", "image=logo.png", "--arg", "prompt=x", "--arg", "background=blue"}, "invalid argument: args.background must be a CSS hex colour"},
		{[]string{"generate", "image/generation"}, "prompt"},
		{[]string{"generate", "image/self-portrait", "--file", "image=logo.png", "--arg", "prompt=x"}, "403 permission_required"},
		{[]string{"generate", "audio/voiceover", "--arg", "voiceId=nobody", "--arg", "script=hi"}, "nobody"},
		{[]string{"generate", "logo-reveal", "--file", "image=missing.png", "--arg", "prompt=x"}, "no such file"},
		{[]string{"generate", "image/nope", "--arg", "prompt=x"}, "unknown feature"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := run(t, dir, srv.env(), "", tc.args...)
			requireFailure(t, r, exitUsage, tc.want)
		})
	}
	assert.Equal(t, before, srv.balance(t), "nothing charged")
	var page struct{ Generations []any }
	srv.call(t, http.MethodGet, srv.base+"/v3/generations", "", &page)
	assert.Empty(t, page.Generations, "nothing created")
}

// TestLocalFileErrorExitsOther checks that a file the command cannot write
// on this machine (--save or --dir naming a file, trigger --save naming a
// folder) exits 1, not 6: its errno is no network's.
func TestLocalFileErrorExitsOther(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "taken", []byte("a file, not a folder"))
	r := run(t, dir, nil, "", "trigger", "generation.done", "--secret", "s", "--save", dir)
	requireFailure(t, r, exitOther, "is a directory")

	_, env := inProcess(t)
	r = run(t, dir, env, "", "generate", "image/generation", "--arg", "prompt=a kite", "--save", "taken", "--json")
	assert.Equal(t, exitOther, r.code, r.stderr)
	assert.Contains(t, r.stderr, "not a directory")
	id := decode[map[string]any](t, r.stdout)["id"].(string)
	requireFailure(t, run(t, dir, env, "", "download", id, "--dir", "taken"), exitOther, "not a directory")
}

// TestServePrintsItsKey checks that `mediagen serve -api-key K` prints K for
// scripts to read even when MEDIAGEN_API_KEY is K already (the environment of
// an earlier run): the key the server serves is not the caller's to mask.
func TestServePrintsItsKey(t *testing.T) {
	const key = "mg_test_same_key_again"
	cmd := command(t, t.TempDir(), []string{"MEDIAGEN_API_KEY=" + key}, "serve", "--addr", "127.0.0.1:0", "-api-key", key)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if k, v, _ := strings.Cut(sc.Text(), "="); k == "MEDIAGEN_API_KEY" {
			assert.Equal(t, key, v)
			return
		}
	}
	t.Fatalf("mediagen serve printed no MEDIAGEN_API_KEY line: %v", sc.Err())
}
