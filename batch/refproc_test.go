package batch

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/journal"
)

// The load benchmarks run the reference server command in a process of its
// own, on loopback, as the brief of issue 23 names it, plus -test-control,
// which lets them heal the faults while they count generations.
var refserverArgs = []string{"-addr", "127.0.0.1:0", "-render-scale", "0.01", "-balance", "1000000",
	"-fault-http", "0.1", "-fault-statuses", "429", "-fault-retry-after", "100ms", "-test-control"}

// faultsOn is the faults of refserverArgs, for setting them back.
const faultsOn = `{"httpStatus":0.1,"statuses":[429],"retryAfter":"100ms"}`

// buildRefserver builds the command once per benchmark.
func buildRefserver(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "refserver")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/mediagen/mediagen-go/internal/cmd/refserver").CombinedOutput()
	if err != nil {
		tb.Fatalf("building the reference server command: %v\n%s", err, out)
	}
	return bin
}

// refProc is a running reference server command.
type refProc struct {
	cmd                  *exec.Cmd
	baseURL, key, ctlURL string
}

// startRefserver starts bin and reads the variables it prints; the server
// stops with the benchmark.
func startRefserver(tb testing.TB, bin string) *refProc {
	tb.Helper()
	cmd := exec.Command(bin, refserverArgs...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &refProc{cmd: cmd}
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	for (p.baseURL == "" || p.key == "" || p.ctlURL == "") && sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "MEDIAGEN_BASE_URL":
			p.baseURL = v
		case "MEDIAGEN_API_KEY":
			p.key = v
		case "MEDIAGEN_TEST_CONTROL_URL":
			p.ctlURL = v
		}
	}
	if p.ctlURL == "" {
		tb.Fatal("the reference server printed no MEDIAGEN_TEST_CONTROL_URL")
	}
	if err := checkLoopback(p.baseURL); err != nil {
		tb.Fatal(err)
	}
	return p
}

// checkLoopback refuses a URL whose host is not a loopback address.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address; the load only runs against local servers", u.Hostname())
	}
	return nil
}

// setFaults replaces the server's faults through test control.
func (p *refProc) setFaults(tb testing.TB, body string) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPut, p.ctlURL+"/faults", bytes.NewBufferString(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", p.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("PUT faults: %s", resp.Status)
	}
}

// perKey counts the server's generations by prompt (each item's prompt is
// its key), with the faults healed meanwhile.
func (p *refProc) perKey(tb testing.TB, c *client.Client) map[string]int {
	tb.Helper()
	p.setFaults(tb, `{}`)
	defer p.setFaults(tb, faultsOn)
	n := map[string]int{}
	for g, err := range c.Generations(context.Background(), client.ListParams{Limit: 100}) {
		if err != nil {
			tb.Fatal(err)
		}
		prompt, _ := g.Params["prompt"].(string)
		n[prompt]++
	}
	return n
}

// loadClient is a client of the server at baseURL with a journal in a
// SQLite file (WAL, synchronous=NORMAL) and a hold of 2 s, so that a run
// after a SIGKILL takes over the dead run's keys at once.
func loadClient(baseURL, key, journalPath string, mw client.Middleware) (*client.Client, func(), error) {
	if os.Getenv("BATCHLOAD_MEMORY") != "" {
		hc := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
		c, err := client.New(key, client.WithBaseURL(baseURL), client.WithHTTPClient(hc), client.WithMiddleware(mw))
		return c, func() {}, err
	}
	db, err := sql.Open("sqlite", "file:"+journalPath+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, nil, err
	}
	j, err := journal.Open(context.Background(), db, mediagen.SQLite)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	hc := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
	opts := []client.Option{client.WithBaseURL(baseURL), client.WithHTTPClient(hc), client.WithJournal(j),
		client.WithJournalHold(2 * time.Second)}
	if mw != nil {
		opts = append(opts, client.WithMiddleware(mw))
	}
	c, err := client.New(key, opts...)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return c, func() { db.Close() }, nil
}
