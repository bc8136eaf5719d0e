package upload

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/refserver"
)

// The memory test and the benchmarks talk to a reference server in a child
// process (this test binary, re-run with childEnv set), so the parent's heap
// holds only the client side of an upload.
const (
	childEnv = "MEDIAGEN_UPLOAD_REFSERVER_CHILD"
	childKey = "mg_child_upload_key"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		serveChild()
		return
	}
	code := m.Run()
	stopChild()
	os.Exit(code)
}

// serveChild runs the reference server until stdin closes.
func serveChild() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ref := refserver.New(refserver.WithProject(childKey, 1000), refserver.WithRenderScale(0.01))
	go func() { _ = http.Serve(ln, ref) }() // serves until the process ends
	fmt.Printf("http://%s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	ref.Close()
}

var child struct {
	once  sync.Once
	url   string
	err   error
	cmd   *exec.Cmd
	stdin io.Closer
}

// childURL starts the child server once and returns its base URL.
func childURL(tb testing.TB) string {
	tb.Helper()
	child.once.Do(func() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=1")
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			child.err = err
			return
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			child.err = err
			return
		}
		if child.err = cmd.Start(); child.err != nil {
			return
		}
		child.cmd, child.stdin = cmd, stdin
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			child.err = fmt.Errorf("child server: %w", err)
			return
		}
		child.url = strings.TrimSpace(line)
	})
	require.NoError(tb, child.err)
	return child.url
}

// stopChild ends the child server, if it was started.
func stopChild() {
	if child.cmd == nil {
		return
	}
	child.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- child.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = child.cmd.Process.Kill()
		<-done
	}
}

// childClient returns a client of the child server.
func childClient(tb testing.TB) *client.Client {
	tb.Helper()
	c, err := client.New(childKey, client.WithBaseURL(childURL(tb)))
	require.NoError(tb, err)
	return c
}
