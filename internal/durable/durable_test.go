package durable_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
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

const (
	keyCount   = 250 // keys, each submitted by every worker: 1,000 creates with 4 workers
	workers    = 4
	minKills   = 10
	startFunds = 1000.0
)

// TestChargedOnceAcrossKilledProcesses runs worker processes that submit
// overlapping keys through one journal against the reference server
// command with 20% of requests faulted, kills them with SIGKILL at random
// (and lets them kill themselves between a create and its record), starts
// them again, and checks on the server: one generation per key, the balance
// moved by exactly their charges, one id per key for every worker.
func TestChargedOnceAcrossKilledProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs worker processes for a few seconds")
	}
	bin := t.TempDir()
	ref := proctest.BuildRefServer(t)
	goBuild(t, bin, "worker", "./worker")

	t.Run("SQLite", func(t *testing.T) {
		dsn := "file:" + filepath.Join(t.TempDir(), "journal.db") + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)"
		run(t, ref, bin, "sqlite", dsn)
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		run(t, ref, bin, "postgres", pgtest.DSN(t))
	})
}

func run(t *testing.T, ref, bin, dialect, dsn string) {
	env := startServer(t, ref, faulted()...)
	keys := make([]string, keyCount)
	for i := range keys {
		keys[i] = fmt.Sprintf("order-%03d", i)
	}

	var mu sync.Mutex
	handed := map[string]map[string]bool{} // key -> ids handed out
	kills, runs := 0, 0
	var live sync.Map // worker index -> *exec.Cmd
	var wg sync.WaitGroup
	deadline := time.Now().Add(3 * time.Minute)
	for w := range workers {
		order := append([]string(nil), keys...)
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		wg.Go(func() {
			for time.Now().Before(deadline) {
				cmd := exec.Command(filepath.Join(bin, "worker"), "-dialect", dialect, "-dsn", dsn,
					"-keys", strings.Join(order, ","), "-kill-after-send", "0.004", "-hold", "2s")
				cmd.Env = append(os.Environ(), env...)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				require.NoError(t, cmd.Start())
				live.Store(w, cmd)
				err := cmd.Wait()
				live.Delete(w)
				mu.Lock()
				runs++
				sc := bufio.NewScanner(&stdout)
				for sc.Scan() {
					key, id, ok := strings.Cut(sc.Text(), " ")
					require.True(t, ok, sc.Text())
					if handed[key] == nil {
						handed[key] = map[string]bool{}
					}
					handed[key][id] = true
				}
				if ee, ok := err.(*exec.ExitError); ok && ee.Sys().(syscall.WaitStatus).Signaled() {
					kills++
					mu.Unlock()
					continue // killed: start it again
				}
				mu.Unlock()
				require.NoError(t, err, "worker: %s", stderr.String())
				return
			}
			t.Error("workers did not finish in time")
		})
	}
	// The killer: SIGKILL a running worker now and then.
	stop := make(chan struct{})
	killed := make(chan int)
	go func() {
		n := 0
		defer func() { killed <- n }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(50+rand.IntN(250)) * time.Millisecond):
			}
			live.Range(func(_, v any) bool {
				if rand.IntN(workers) == 0 {
					if v.(*exec.Cmd).Process.Signal(syscall.SIGKILL) == nil {
						n++
					}
				}
				return true
			})
		}
	}()
	wg.Wait()
	close(stop)
	<-killed
	t.Logf("%s: %d worker runs, %d of them ended by SIGKILL", dialect, runs, kills)
	assert.GreaterOrEqual(t, kills, minKills, "enough kills to mean something")

	// On the server, with the faults healed.
	ctx := context.Background()
	testControl(t, env, http.MethodPut, "/faults", `{}`)
	c, err := client.New(value(env, "MEDIAGEN_API_KEY"), client.WithBaseURL(value(env, "MEDIAGEN_BASE_URL")), client.WithMaxRetries(20))
	require.NoError(t, err)
	perKey := map[string][]string{}
	var charged float64
	for g, err := range c.Generations(ctx, client.ListParams{}) {
		require.NoError(t, err)
		key := strings.TrimPrefix(g.Params["prompt"].(string), "durable ")
		perKey[key] = append(perKey[key], g.ID)
		charged += g.BalanceUsed
	}
	for _, key := range keys {
		ids := perKey[key]
		if assert.Len(t, ids, 1, "key %s: exactly one generation (no double charge, none lost)", key) {
			assert.Equal(t, map[string]bool{ids[0]: true}, handed[key], "key %s: every worker handed the same id", key)
		}
	}
	assert.Len(t, perKey, keyCount, "no generation outside the keys")
	var bal struct{ Balance float64 }
	require.NoError(t, json.Unmarshal(testControl(t, env, http.MethodGet, "/balance", ""), &bal))
	assert.InDelta(t, startFunds-charged, bal.Balance, 1e-6, "the balance moved by exactly the charges")
}

func goBuild(t testing.TB, dir, name, pkg string) {
	t.Helper()
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// faulted is the fault mix of the durable test: 20% of requests faulted.
func faulted() []string {
	return []string{"-balance", fmt.Sprint(startFunds), "-fault-seed", fmt.Sprint(rand.Int64()), "-fault-drop-after", "0.08",
		"-fault-drop-before", "0.04", "-fault-http", "0.08", "-fault-statuses", "429,500,502,503"}
}

// startServer runs the reference server command bin (proctest.BuildRefServer)
// with args and returns the variables it printed, as KEY=VALUE.
func startServer(t testing.TB, bin string, args ...string) []string {
	t.Helper()
	return proctest.Env(proctest.StartRefServer(t, bin,
		append([]string{"-addr", "127.0.0.1:0", "-render-scale", "0.01", "-test-control"}, args...)...))
}

func value(env []string, name string) string {
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			return v
		}
	}
	return ""
}

func testControl(t *testing.T, env []string, method, path, body string) []byte {
	t.Helper()
	req, err := http.NewRequest(method, value(env, "MEDIAGEN_TEST_CONTROL_URL")+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", value(env, "MEDIAGEN_API_KEY"))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, buf.String())
	return buf.Bytes()
}
