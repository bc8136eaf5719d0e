package replicas_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/pgtest"
	"github.com/mediagen/mediagen-go/internal/proctest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := pgtest.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the test PostgreSQL server:", err)
	}
	os.Exit(code)
}

// generations is how many generations the waiter creates: a third each of
// images, voiceovers and logo reveals, half to each receiver.
const generations = 60

// TestEventsEndWaitsAcrossReplicas runs the reference server command, two
// receiver processes and a waiter process on one shared database, and
// checks that every wait ended with its generation done on the events the
// receivers shared, at no more than 1.1 requests per generation.
func TestEventsEndWaitsAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs four processes")
	}
	bin := t.TempDir()
	for _, name := range []string{"receiver", "waiter"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, name), "./"+name).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	ref := proctest.BuildRefServer(t)
	t.Run("SQLite", func(t *testing.T) {
		dsn := "file:" + filepath.Join(t.TempDir(), "shared.db") + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)"
		run(t, ref, bin, "sqlite", dsn)
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		run(t, ref, bin, "postgres", pgtest.DSN(t))
	})
}

func run(t *testing.T, ref, bin, dialect, dsn string) {
	env := startServer(t, ref,
		"-addr", "127.0.0.1:0", "-render-scale", "0.01", "-allow-http-webhooks", "-balance", "10000")

	// Both receivers create their tables at once, as replicas starting do.
	var mu sync.Mutex
	delivered := map[string]int64{} // generation id -> first delivery, unix ns
	receivers := make([]*receiver, 2)
	for i := range receivers {
		receivers[i] = startReceiver(t, filepath.Join(bin, "receiver"), env, dialect, dsn, func(id string, ns int64) {
			mu.Lock()
			defer mu.Unlock()
			if at, ok := delivered[id]; !ok || ns < at {
				delivered[id] = ns
			}
		})
	}
	var urls []string
	for _, r := range receivers {
		urls = append(urls, r.url(t))
	}

	waiter := exec.Command(filepath.Join(bin, "waiter"), "-dialect", dialect, "-dsn", dsn,
		"-receivers", strings.Join(urls, ","), "-n", strconv.Itoa(generations))
	waiter.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	waiter.Stdout, waiter.Stderr = &stdout, &stderr
	start := time.Now()
	require.NoError(t, waiter.Run(), "waiter: %s", stderr.String())
	elapsed := time.Since(start)
	assert.Empty(t, stderr.String(), "the waiter reported no error")
	var stopping sync.WaitGroup
	for _, r := range receivers {
		stopping.Go(func() { r.stop(t) }) // every delivery line printed
	}
	stopping.Wait()

	returned := map[string]int64{}
	kinds := map[string]int{}
	var genRequests, otherRequests int
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 5 && f[0] == "wait":
			assert.Equal(t, "done", f[3], "generation %s (%s)", f[1], f[2])
			ns, err := strconv.ParseInt(f[4], 10, 64)
			require.NoError(t, err)
			returned[f[1]] = ns
			kinds[f[2]]++
		case len(f) == 3 && f[0] == "requests":
			n, err := strconv.Atoi(f[2])
			require.NoError(t, err)
			if f[1] == "generations" {
				genRequests = n
			} else {
				otherRequests = n
			}
		default:
			t.Errorf("unexpected waiter line %q", sc.Text())
		}
	}
	require.Len(t, returned, generations, "every wait ended")
	assert.Equal(t, map[string]int{"image": 20, "audio": 20, "video": 20}, kinds)

	perGen := float64(genRequests) / generations
	assert.LessOrEqual(t, perGen, 1.1, "requests per generation, create included")

	var lat []time.Duration
	for id, at := range returned {
		d, ok := delivered[id]
		if assert.True(t, ok, "a receiver delivered %s", id) {
			lat = append(lat, time.Duration(at-d))
		}
	}
	slices.Sort(lat)
	require.NotEmpty(t, lat)
	p50, p99 := lat[len(lat)/2], lat[(len(lat)*99+99)/100-1]
	t.Logf("%s: %d generations in %s; %d generation requests (%.2f per generation, create included) and %d others (voice list, upload); "+
		"delivery to wait's return: p50 %s, p99 %s, max %s (goal p99 < 250ms)",
		dialect, generations, elapsed.Round(time.Millisecond), genRequests, perGen, otherRequests,
		p50.Round(100*time.Microsecond), p99.Round(100*time.Microsecond), lat[len(lat)-1].Round(100*time.Microsecond))
	assert.Positive(t, lat[0], "no wait ended before its event was delivered")
}

// receiver is a running receiver process.
type receiver struct {
	cmd    *exec.Cmd
	urls   chan string
	done   chan struct{}
	stderr *bytes.Buffer
}

// startReceiver runs a receiver process; onDeliver gets each delivery line.
func startReceiver(t *testing.T, bin string, env []string, dialect, dsn string, onDeliver func(id string, ns int64)) *receiver {
	t.Helper()
	r := &receiver{cmd: exec.Command(bin, "-dialect", dialect, "-dsn", dsn), urls: make(chan string, 1),
		done: make(chan struct{}), stderr: &bytes.Buffer{}}
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Stderr = r.stderr
	stdout, err := r.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, r.cmd.Start())
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.done
	})
	go func() {
		defer close(r.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if u, ok := strings.CutPrefix(line, "URL="); ok {
				r.urls <- u
				continue
			}
			f := strings.Fields(line)
			if len(f) != 3 || f[0] != "deliver" {
				continue
			}
			if ns, err := strconv.ParseInt(f[2], 10, 64); err == nil {
				onDeliver(f[1], ns)
			}
		}
		_ = r.cmd.Wait()
	}()
	return r
}

// url waits for the receiver to listen.
func (r *receiver) url(t *testing.T) string {
	t.Helper()
	select {
	case u := <-r.urls:
		return u
	case <-r.done:
		t.Fatalf("the receiver exited: %s", r.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("the receiver did not start")
	}
	return ""
}

// stop interrupts the receiver and waits until it exited and its output
// was read.
func (r *receiver) stop(t *testing.T) {
	assert.NoError(t, r.cmd.Process.Signal(os.Interrupt))
	select {
	case <-r.done:
	case <-time.After(15 * time.Second):
		t.Error("the receiver did not stop on SIGINT")
		return
	}
	assert.Zero(t, r.cmd.ProcessState.ExitCode(), "receiver: %s", r.stderr.String())
	assert.Empty(t, r.stderr.String(), "the receiver reported no error")
}

// startServer runs the reference server command bin
// (proctest.BuildRefServer) with args and returns the variables it prints,
// as KEY=VALUE.
func startServer(t *testing.T, bin string, args ...string) []string {
	t.Helper()
	return proctest.Env(proctest.StartRefServer(t, bin, args...))
}
