package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mediagen/mediagen-go/internal/procvars"
)

// refserverPackage is built when no -refserver binary is given; the import
// path builds from any folder of the module.
const refserverPackage = "github.com/mediagen/mediagen-go/internal/cmd/refserver"

// buildRefserver builds the reference server command into dir.
func buildRefserver(ctx context.Context, dir string, stderr io.Writer) (string, error) {
	bin := filepath.Join(dir, "refserver")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, refserverPackage)
	build.Stdout, build.Stderr = stderr, stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building %s (run inside the module): %w", refserverPackage, err)
	}
	return bin, nil
}

// server is a running reference server command.
type server struct {
	url, key, secret string
	cmd              *exec.Cmd
	dropped          atomic.Int64 // deliveries it reported dropped after its retry
	logDone          chan struct{}
}

// startServer runs bin on a free loopback port at the render scale and
// reads the variables it prints. Its stderr is passed on, except its
// reports of deliveries dropped, which are counted.
func startServer(ctx context.Context, bin string, scale float64, stderr io.Writer) (*server, error) {
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-render-scale", strconv.FormatFloat(scale, 'g', -1, 64),
		"-allow-http-webhooks", "-balance", "1000")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	errOut, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, logDone: make(chan struct{})}
	go s.readLog(errOut, stderr)
	vars, err := readVars(ctx, out)
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if err != nil {
		s.stop()
		return nil, err
	}
	s.url, s.key, s.secret = vars["MEDIAGEN_BASE_URL"], vars["MEDIAGEN_API_KEY"], vars["MEDIAGEN_WEBHOOK_SECRET"]
	if err := checkLoopback(s.url); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// readLog counts the server's "webhook ... dropped" lines and passes the
// others on.
func (s *server) readLog(r io.Reader, w io.Writer) {
	defer close(s.logDone)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "refserver: webhook ") && strings.Contains(line, " dropped after ") {
			s.dropped.Add(1)
			continue
		}
		fmt.Fprintln(w, line)
	}
}

// stop ends the server, gently first.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	<-s.logDone
}

// serverVars are the lines the server prints before it serves.
var serverVars = []string{"MEDIAGEN_BASE_URL", "MEDIAGEN_API_KEY", "MEDIAGEN_WEBHOOK_SECRET"}

// readVars reads the variables the server prints, within 30 seconds.
func readVars(ctx context.Context, out io.Reader) (map[string]string, error) {
	return procvars.Read(ctx, out, 30*time.Second, serverVars...)
}

// tempDir makes a folder for the built server, removed by the returned
// function.
func tempDir() (string, func(), error) {
	dir, err := os.MkdirTemp("", "hubload")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// lockedWriter serialises writes from the servers' log readers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
