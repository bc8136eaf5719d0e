package refserver

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// browser is headless Chromium driven over the DevTools protocol on a
// pipe (--remote-debugging-pipe: commands on fd 3, answers on fd 4, each
// message ending in a NUL byte), which needs no WebSocket client.
type browser struct {
	cmd     *exec.Cmd
	send    io.WriteCloser
	recv    chan cdpMessage // every message Chromium sends, read by one goroutine
	next    int
	session string // the page's, once attached
}

// cdpMessage is an answer (with ID) or an event (without).
type cdpMessage struct {
	ID     int
	Result json.RawMessage
	Error  *struct{ Message string }
}

// startBrowser runs Chromium, attaches to its page and opens url there.
// The browser is closed when the test ends.
func startBrowser(t *testing.T, chromium, url string) *browser {
	t.Helper()
	cmdR, cmdW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.Command(chromium,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--autoplay-policy=no-user-gesture-required", "--mute-audio", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, outW} // fds 3 and 4
	require.NoError(t, cmd.Start())
	cmdR.Close()
	outW.Close()
	b := &browser{cmd: cmd, send: cmdW, recv: make(chan cdpMessage, 64)}
	go func() {
		defer close(b.recv)
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadBytes(0)
			if err != nil {
				return
			}
			var m cdpMessage
			if json.Unmarshal(line[:len(line)-1], &m) == nil && m.ID != 0 {
				b.recv <- m
			}
		}
	}()
	t.Cleanup(func() {
		_, _ = b.call("Browser.close", nil, time.Second)
		b.send.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		outR.Close()
	})

	var targets struct {
		TargetInfos []struct{ TargetID, Type string }
	}
	b.must(t, "Target.getTargets", nil, &targets)
	for _, ti := range targets.TargetInfos {
		if ti.Type == "page" {
			var att struct{ SessionID string }
			b.must(t, "Target.attachToTarget", map[string]any{"targetId": ti.TargetID, "flatten": true}, &att)
			b.session = att.SessionID
			// Navigate answers once the new document is committed, so
			// scripts evaluated after it run there.
			b.must(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": false}, nil)
			b.must(t, "Page.navigate", map[string]any{"url": url}, nil)
			return b
		}
	}
	t.Fatal("Chromium opened no page")
	return nil
}

// must calls method and decodes its result into out.
func (b *browser) must(t *testing.T, method string, params, out any) {
	t.Helper()
	res, err := b.call(method, params, 30*time.Second)
	require.NoError(t, err, method)
	if out != nil {
		require.NoError(t, json.Unmarshal(res, out), method)
	}
}

// call sends one command (to the page once attached, except Target and
// Browser commands) and waits for its answer, skipping events.
func (b *browser) call(method string, params any, timeout time.Duration) (json.RawMessage, error) {
	b.next++
	msg := map[string]any{"id": b.next, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if b.session != "" && method[:6] != "Target" && method[:7] != "Browser" {
		msg["sessionId"] = b.session
	}
	raw, _ := json.Marshal(msg)
	if _, err := b.send.Write(append(raw, 0)); err != nil {
		return nil, err
	}
	deadline := time.After(timeout)
	for {
		select {
		case m, ok := <-b.recv:
			switch {
			case !ok:
				return nil, errors.New("Chromium closed the pipe")
			case m.ID != b.next:
				continue // the answer to an abandoned call
			case m.Error != nil:
				return nil, errors.New(m.Error.Message)
			}
			return m.Result, nil
		case <-deadline:
			return nil, fmt.Errorf("%s: no answer in %s", method, timeout)
		}
	}
}

// eval runs an async JavaScript expression in the page and decodes the
// value it resolves to.
func (b *browser) eval(t *testing.T, expr string, out any) {
	t.Helper()
	var res struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	b.must(t, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &res)
	if res.ExceptionDetails != nil {
		t.Fatalf("page script failed: %s %s", res.ExceptionDetails.Text, res.ExceptionDetails.Exception.Description)
	}
	require.NoError(t, json.Unmarshal(res.Result.Value, out), string(res.Result.Value))
}
