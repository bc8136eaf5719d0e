// Command refload measures the reference server under load: keep-alive
// workers submit a generation and read it back (a create+get pair) until the
// server stores -n generations, and the command prints pairs per second for
// every window of -window generations, and GET and 100-row page latencies
// at each checkpoint (-checkpoints), with the load paused and every
// generation finished. Given the server's debug listener it also prints the
// live heap per stored generation.
//
// Against a server already running (it needs a balance that covers -n
// image generations):
//
//	go run ./internal/cmd/refserver -addr 127.0.0.1:8080 -api-key KEY -balance 1000000 -render-scale 0.01 -debug-addr 127.0.0.1:6060
//	go run ./internal/cmd/refload -url http://127.0.0.1:8080 -api-key KEY -debug-url http://127.0.0.1:6060
//
// Or let it start the servers, each run in a fresh process, alternating the
// reference server with a minimal Go server doing the same map work (the
// floor), so that neither always runs first (run from the module root; it
// builds ./internal/cmd/refserver):
//
//	go run ./internal/cmd/refload -spawn -rounds 2
//
// -serve-floor ADDR only serves the floor, for driving it by hand, until
// -max-time.
//
// Each run ends with the goals of issue 12 checked against its own
// figures; with -spawn, the medians over runs, their spread (min-max, a
// measure of the machine's noise) and the reference server's figures over
// the floor's follow.
//
// The load is bounded: at most 1,000,000 generations, 512 workers and one
// hour (-max-time, which also ends a -serve-floor), and it only talks to
// loopback addresses.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Bounds on what one invocation may ask for.
const (
	maxGenerations = 1_000_000
	maxWorkers     = 512
	maxTime        = time.Hour
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "refload:", err)
		os.Exit(1)
	}
}

// config is a load run's settings.
type config struct {
	url, key, debugURL string
	n, workers, window int
	checkpoints        []int
	probes             int
	maxTime            time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("refload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.url, "url", os.Getenv("MEDIAGEN_BASE_URL"), "base URL of a running reference server (loopback only)")
	fs.StringVar(&c.key, "api-key", os.Getenv("MEDIAGEN_API_KEY"), "API key of a project on it")
	fs.StringVar(&c.debugURL, "debug-url", "", "the server's -debug-addr URL, to read its heap (optional)")
	fs.IntVar(&c.n, "n", 100_000, "generations to create, at most 1,000,000")
	fs.IntVar(&c.workers, "workers", 32, "concurrent keep-alive workers, at most 512")
	fs.IntVar(&c.window, "window", 10_000, "generations per reported window")
	points := fs.String("checkpoints", "1000,10000,100000", "stored counts at which latencies (and heap) are measured, load paused")
	fs.IntVar(&c.probes, "probes", 1000, "GETs and pages timed at each checkpoint")
	fs.DurationVar(&c.maxTime, "max-time", 10*time.Minute, "give up after this long, at most 1h")
	spawn := fs.Bool("spawn", false, "start the reference server and the floor in fresh processes, alternately")
	rounds := fs.Int("rounds", 1, "with -spawn: rounds of (reference, floor), the order swapped every other round")
	scale := fs.String("render-scale", "0.01", "with -spawn: the reference server's -render-scale")
	floorAddr := fs.String("serve-floor", "", "only serve the floor server on this loopback address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.maxTime <= 0 || c.maxTime > maxTime {
		return fmt.Errorf("-max-time must be positive and at most %s", maxTime)
	}
	ctx, cancel := context.WithTimeout(ctx, c.maxTime)
	defer cancel()
	if *floorAddr != "" {
		return serveFloor(ctx, *floorAddr, stdout)
	}
	var err error
	if c.checkpoints, err = parseCounts(*points); err != nil {
		return err
	}
	switch {
	case c.n < 1 || c.n > maxGenerations:
		return fmt.Errorf("-n must be 1 to %d", maxGenerations)
	case c.workers < 1 || c.workers > maxWorkers:
		return fmt.Errorf("-workers must be 1 to %d", maxWorkers)
	case c.window < 1:
		return errors.New("-window must be positive")
	case c.probes < 1 || c.probes > 100_000:
		return errors.New("-probes must be 1 to 100000")
	case *rounds < 1 || *rounds > 10:
		return errors.New("-rounds must be 1 to 10")
	}
	if *spawn {
		return compare(ctx, c, *rounds, *scale, stdout, stderr)
	}
	if err := checkLoopback(c.url); err != nil {
		return err
	}
	if err := checkLoopback(c.debugURL); c.debugURL != "" && err != nil {
		return err
	}
	if c.key == "" {
		return errors.New("-api-key (or MEDIAGEN_API_KEY) is required")
	}
	res, err := load(ctx, c, stdout)
	if res != nil {
		res.summary(stdout)
	}
	return err
}

// parseCounts reads a comma-separated list of positive counts.
func parseCounts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("checkpoint %q is not a positive count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// checkLoopback refuses a URL whose host is not a loopback address: the
// load generator must never be pointed at someone else's service.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("%q is not an http URL", raw)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil {
		if !ip.IsLoopback() {
			return fmt.Errorf("%s is not a loopback address; refload only loads local servers", host)
		}
		return nil
	}
	if host != "localhost" {
		return fmt.Errorf("%s is not a loopback address; refload only loads local servers", host)
	}
	return nil
}

// newClient returns a client keeping up to workers connections alive. Its
// dialer refuses any address that is not loopback once resolved, whatever
// a name resolved to.
func newClient(workers int) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("refusing to dial %s: not a loopback address", address)
		}
		return nil
	}}
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil, // loopback only, never through a proxy
		DialContext:         d.DialContext,
		MaxIdleConns:        workers + 4,
		MaxIdleConnsPerHost: workers + 4,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}}
}
