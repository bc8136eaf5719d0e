package batch

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/proctest"
)

// The load benchmarks run the reference server command in a process of its
// own, on loopback, as the brief of issue 23 names it, plus -test-control,
// which lets them heal the faults while they count generations.
var refserverArgs = []string{"-addr", "127.0.0.1:0", "-render-scale", "0.01", "-balance", "1000000",
	"-fault-http", "0.1", "-fault-statuses", "429", "-fault-retry-after", "100ms", "-test-control"}

// faultsOn is the faults of refserverArgs, for setting them back.
const faultsOn = `{"httpStatus":0.1,"statuses":[429],"retryAfter":"100ms"}`

// refProc is a running reference server command.
type refProc struct {
	baseURL, key, ctlURL string
}

// startRefserver starts bin (proctest.BuildRefServer) and reads the
// variables it prints; the server stops with the benchmark.
func startRefserver(tb testing.TB, bin string) *refProc {
	tb.Helper()
	vars := proctest.StartRefServer(tb, bin, refserverArgs...)
	p := &refProc{baseURL: vars["MEDIAGEN_BASE_URL"], key: vars["MEDIAGEN_API_KEY"], ctlURL: vars["MEDIAGEN_TEST_CONTROL_URL"]}
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
