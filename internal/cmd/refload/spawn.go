package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/mediagen/mediagen-go/internal/procvars"
)

// target is a kind of server -spawn starts.
type target struct {
	name string
	cmd  func() *exec.Cmd
}

// compare runs the load against a fresh reference server and a fresh floor
// server per run, rounds times, the order swapped every other round (ABBA),
// then prints each run's summary and the ratios of the medians.
func compare(ctx context.Context, c config, rounds int, scale string, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "refload")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	refBin := filepath.Join(dir, "refserver")
	build := exec.CommandContext(ctx, "go", "build", "-o", refBin, "./internal/cmd/refserver")
	build.Stdout, build.Stderr = stderr, stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building ./internal/cmd/refserver (run from the module root): %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ref := target{"refserver", func() *exec.Cmd {
		return exec.Command(refBin, "-addr", "127.0.0.1:0", "-api-key", "refload", "-balance", "1000000000",
			"-render-scale", scale, "-debug-addr", "127.0.0.1:0")
	}}
	flr := target{"floor", func() *exec.Cmd {
		return exec.Command(self, "-serve-floor", "127.0.0.1:0", "-max-time", c.maxTime.String())
	}}

	var results []*result
	for r := range rounds {
		order := []target{ref, flr}
		if r%2 == 1 {
			order = []target{flr, ref}
		}
		for _, t := range order {
			fmt.Fprintf(stdout, "\n== round %d: %s\n", r+1, t.name)
			res, err := spawnAndLoad(ctx, c, t, stdout, stderr)
			if res != nil {
				res.label = t.name
				res.summary(stdout)
				results = append(results, res)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
		}
	}
	compareSummary(stdout, results)
	return nil
}

// spawnAndLoad starts t, loads it, and stops it.
func spawnAndLoad(ctx context.Context, c config, t target, stdout, stderr io.Writer) (*result, error) {
	cmd := t.cmd()
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	vars, err := readVars(ctx, out)
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if err != nil {
		return nil, err
	}
	c.url, c.key, c.debugURL = vars["MEDIAGEN_BASE_URL"], vars["MEDIAGEN_API_KEY"], vars["MEDIAGEN_DEBUG_URL"]
	if err := checkLoopback(c.url); err != nil {
		return nil, err
	}
	if err := checkLoopback(c.debugURL); err != nil {
		return nil, err
	}
	return load(ctx, c, stdout)
}

// spawnedVars are the lines a spawned server must print before it is
// loaded; both targets print them in their first lines.
var spawnedVars = []string{"MEDIAGEN_BASE_URL", "MEDIAGEN_API_KEY", "MEDIAGEN_DEBUG_URL"}

// readVars reads the variables the server prints, within 30 seconds.
func readVars(ctx context.Context, out io.Reader) (map[string]string, error) {
	return procvars.Read(ctx, out, 30*time.Second, spawnedVars...)
}

// compareSummary prints, per target, the median over its runs and their
// range (the spread shows how noisy the machine was) of: overall pairs/s,
// the last window's rate over the first's, the GET and page p50 at the last
// checkpoint and their growth since the first, and the heap per
// generation; then the reference server's medians over the floor's.
func compareSummary(out io.Writer, results []*result) {
	type figures struct{ rate, lastFirst, get, page, getGrowth, pageGrowth, heap []float64 }
	by := map[string]*figures{}
	for _, r := range results {
		f := by[r.label]
		if f == nil {
			f = &figures{}
			by[r.label] = f
		}
		n, d := r.total()
		f.rate = append(f.rate, float64(n)/d.Seconds())
		if len(r.windows) > 1 {
			f.lastFirst = append(f.lastFirst, r.lastFirst())
		}
		if len(r.points) > 0 {
			p := r.points[len(r.points)-1]
			f.get = append(f.get, float64(p.get.p50))
			f.page = append(f.page, float64(p.page.p50))
			f.heap = append(f.heap, p.heapPerGen)
		}
		if len(r.points) > 1 {
			f.getGrowth = append(f.getGrowth, r.getGrowth())
			f.pageGrowth = append(f.pageGrowth, r.pageGrowth())
		}
	}
	ref, flr := by["refserver"], by["floor"]
	if ref == nil || flr == nil {
		return
	}
	fmt.Fprintf(out, "\n== %d runs each: median (min-max)      refserver                           floor  ref/floor\n", len(ref.rate))
	row := func(name string, a, b []float64, unit func(float64) string) {
		if len(a) == 0 || len(b) == 0 {
			return
		}
		cell := func(v []float64) string {
			return fmt.Sprintf("%s (%s-%s)", unit(median(v)), unit(slices.Min(v)), unit(slices.Max(v)))
		}
		fmt.Fprintf(out, "%-32s %30s %30s %10.2f\n", name, cell(a), cell(b), median(a)/median(b))
	}
	num := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	ratio := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	dur := func(v float64) string { return round(time.Duration(v)).String() }
	row("pairs/s", ref.rate, flr.rate, num)
	row("last/first window", ref.lastFirst, flr.lastFirst, ratio)
	row("GET p50 (last point)", ref.get, flr.get, dur)
	row("page p50 (last point)", ref.page, flr.page, dur)
	row("GET p50 last/first point", ref.getGrowth, flr.getGrowth, ratio)
	row("page p50 last/first point", ref.pageGrowth, flr.pageGrowth, ratio)
	row("heap B/generation", ref.heap, flr.heap, num)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
