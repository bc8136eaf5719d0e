package batch

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/proctest"
)

// The load benchmarks: batch.Run against the reference server command with
// 10% of answers replaced by 429s. Run from anywhere in the module:
//
//	go test ./batch -run '^$' -bench 'Load$' -benchtime 1x -load-n 2000
//	go test ./batch -run '^$' -bench 'LoadKillResume' -benchtime 1x -load-n 10000
var (
	loadN       = flag.Int("load-n", 2000, "load benchmarks: image generations per run")
	loadWindows = flag.String("load-windows", "1,2,4,8,16,32,64", "BenchmarkLoad: the fixed windows of the sweep")
	loadCeiling = flag.Int("load-ceiling", 64, "load benchmarks: the ceiling of the adaptive runs")
	loadRetries = flag.Int("load-max-retries", -1, "BenchmarkLoad: client.WithMaxRetries for every request of the run; -1 keeps the client's 4")
)

// loadItems are n image generations whose prompts are their keys.
func loadItems(prefix string, n int) []Item {
	items := make([]Item, n)
	for i := range items {
		key := fmt.Sprintf("%s-%05d", prefix, i)
		items[i] = Item{Key: key, Args: client.ImageGenerationArgs{Prompt: key}}
	}
	return items
}

// counter counts a client's requests: create attempts, creates answered
// 200 (a generation created), and 429s of any request.
type counter struct{ posts, created, limited atomic.Int64 }

func (k *counter) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	create := req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/v3/generations")
	if create {
		k.posts.Add(1)
	}
	resp, err := next(req)
	switch {
	case err != nil:
	case resp.StatusCode == http.StatusTooManyRequests:
		k.limited.Add(1)
	case create && resp.StatusCode == http.StatusOK:
		k.created.Add(1)
	}
	return resp, err
}

// doubles counts the keys of items with more than one generation on the
// server, and those with none.
func doubles(items []Item, perKey map[string]int) (double, missing int) {
	for _, it := range items {
		switch n := perKey[it.Key]; {
		case n > 1:
			double++
		case n == 0:
			missing++
		}
	}
	return double, missing
}

func BenchmarkLoad(b *testing.B) {
	bin := proctest.BuildRefServer(b)
	for f := range strings.SplitSeq(*loadWindows, ",") {
		w, err := strconv.Atoi(f)
		if err != nil || w < 1 {
			b.Fatalf("-load-windows: %q is not a window", f)
		}
		b.Run(fmt.Sprintf("fixed=%d", w), func(b *testing.B) { loadRuns(b, bin, WithConcurrency(w), withFixedConcurrency()) })
	}
	b.Run(fmt.Sprintf("adaptive=%d", *loadCeiling), func(b *testing.B) { loadRuns(b, bin, WithConcurrency(*loadCeiling)) })
}

// loadRuns runs b.N batches of -load-n items, each against a fresh server
// with a fresh journal, and reports their rates and the double charges.
func loadRuns(b *testing.B, bin string, opts ...Option) {
	if *loadRetries >= 0 {
		opts = append(opts, WithClientOptions(client.WithMaxRetries(*loadRetries)))
	}
	var items, seconds, submitSeconds, double, missing, limited, posts, notDone float64
	window := 0
	for n := range b.N {
		p := startRefserver(b, bin)
		var k counter
		c, closeDB, err := loadClient(p.baseURL, p.key, filepath.Join(b.TempDir(), "journal.db"), k.middleware)
		if err != nil {
			b.Fatal(err)
		}
		batch := loadItems(fmt.Sprintf("load%d", n), *loadN)
		start := time.Now()
		var submitted time.Duration
		res, err := Run(context.Background(), c, batch, append(opts, OnProgress(func(pr Progress) {
			if pr.Submitted == len(batch) && submitted == 0 {
				submitted = time.Since(start)
			}
			window = pr.Concurrency
		}))...)
		elapsed := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if res.Done != len(batch) {
			b.Logf("%d of %d done; first failure: %v", res.Done, len(batch), firstErr(res))
		}
		notDone += float64(len(batch) - res.Done)
		if submitted == 0 { // some item never got a generation
			submitted = elapsed
		}
		d, m := doubles(batch, p.perKey(b, c))
		closeDB()
		items += float64(res.Done)
		seconds += elapsed.Seconds()
		submitSeconds += submitted.Seconds()
		double += float64(d)
		missing += float64(m)
		limited += float64(k.limited.Load())
		posts += float64(k.posts.Load())
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(items/seconds, "items/s") // items done
	b.ReportMetric(items/submitSeconds, "submitted/s")
	b.ReportMetric(double, "double-charges")
	b.ReportMetric(missing, "missing")
	b.ReportMetric(notDone, "not-done")
	b.ReportMetric(limited/float64(b.N), "429s/run")
	b.ReportMetric(posts/items, "posts/item")
	b.ReportMetric(float64(window), "final-window")
}

func firstErr(res Result) error {
	for _, it := range res.Items {
		if it.Err != nil {
			return fmt.Errorf("%s: %w", it.Key, it.Err)
		}
	}
	return nil
}

// BenchmarkLoadKillResume runs the adaptive batch in a process of its own
// (this test binary, as TestLoadWorker), SIGKILLs it once half the items
// have a generation, runs it again with the same SQLite journal, and
// counts the generations per key on the server: one each, and the second
// run's creates only for the keys that had none.
func BenchmarkLoadKillResume(b *testing.B) {
	bin := proctest.BuildRefServer(b)
	for range b.N {
		p := startRefserver(b, bin)
		dir := b.TempDir()
		items := loadItems("resume", *loadN)
		env := append(os.Environ(), "BATCHLOAD_WORKER=1", "MEDIAGEN_BASE_URL="+p.baseURL, "MEDIAGEN_API_KEY="+p.key,
			"BATCHLOAD_JOURNAL="+filepath.Join(dir, "journal.db"), fmt.Sprintf("BATCHLOAD_N=%d", *loadN),
			fmt.Sprintf("BATCHLOAD_CEILING=%d", *loadCeiling))
		killedAt, _ := runWorker(b, env, *loadN/2)
		c, closeDB, err := loadClient(p.baseURL, p.key, filepath.Join(dir, "journal.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		before := p.perKey(b, c)
		start := time.Now()
		_, line := runWorker(b, env, 0)
		elapsed := time.Since(start)
		var created, posts, done int
		if _, err := fmt.Sscanf(line, "result created=%d posts=%d done=%d", &created, &posts, &done); err != nil {
			b.Fatalf("the second run ended with %q", line)
		}
		after := p.perKey(b, c)
		closeDB()
		d, m := doubles(items, after)
		_, missingBefore := doubles(items, before)
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(killedAt), "submitted-at-kill")
		b.ReportMetric(float64(len(items)-missingBefore), "keys-with-generation-after-kill")
		b.ReportMetric(float64(created), "second-run-creates")
		// Creates of the second run that gave no key its first generation.
		b.ReportMetric(float64(created-(missingBefore-m)), "resubmissions")
		b.ReportMetric(float64(d), "double-charges")
		b.ReportMetric(float64(m), "keys-without-generation")
		b.ReportMetric(float64(done), "second-run-done")
		b.ReportMetric(elapsed.Seconds(), "second-run-s")
	}
}

// runWorker runs TestLoadWorker and, when killAt > 0, SIGKILLs it once it
// reports that many items submitted. It returns the last count reported
// and the worker's last line.
func runWorker(b *testing.B, env []string, killAt int) (int, string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadWorker$", "-test.bench=^$")
	cmd.Env, cmd.Stderr = env, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	submitted, last := 0, ""
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		last = sc.Text()
		if _, err := fmt.Sscanf(last, "progress %d", &submitted); err == nil && killAt > 0 && submitted >= killAt {
			_ = cmd.Process.Kill() // SIGKILL
			break
		}
		if strings.HasPrefix(last, "result ") {
			break
		}
	}
	_ = cmd.Wait()
	if killAt > 0 && submitted < killAt {
		b.Fatalf("the worker ended before it was killed: %q", last)
	}
	return submitted, last
}

// TestLoadWorker is the process BenchmarkLoadKillResume kills: it runs
// the batch against the server of MEDIAGEN_BASE_URL with the journal of
// BATCHLOAD_JOURNAL, printing "progress <submitted>" lines and a result.
func TestLoadWorker(t *testing.T) {
	if os.Getenv("BATCHLOAD_WORKER") == "" {
		t.Skip("run by BenchmarkLoadKillResume")
	}
	n, _ := strconv.Atoi(os.Getenv("BATCHLOAD_N"))
	ceiling, _ := strconv.Atoi(os.Getenv("BATCHLOAD_CEILING"))
	base := os.Getenv("MEDIAGEN_BASE_URL")
	if err := checkLoopback(base); err != nil {
		t.Fatal(err)
	}
	var k counter
	c, closeDB, err := loadClient(base, os.Getenv("MEDIAGEN_API_KEY"), os.Getenv("BATCHLOAD_JOURNAL"), k.middleware)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	w := bufio.NewWriter(os.Stdout)
	last := -1
	res, err := Run(context.Background(), c, loadItems("resume", n), WithConcurrency(ceiling),
		OnProgress(func(p Progress) {
			if p.Submitted != last {
				last = p.Submitted
				fmt.Fprintf(w, "progress %d\n", p.Submitted)
				w.Flush()
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, it := range res.Items {
		if it.Err != nil && shown < 5 {
			shown++
			fmt.Fprintf(os.Stderr, "worker: %s: %v\n", it.Key, it.Err)
		}
	}
	fmt.Fprintf(w, "result created=%d posts=%d done=%d\n", k.created.Load(), k.posts.Load(), res.Done)
	w.Flush()
}

// withFixedConcurrency holds the window at the ceiling, without adapting:
// the baseline of the load benchmark.
func withFixedConcurrency() Option {
	return func(s *settings) error {
		s.fixed = true
		return nil
	}
}
