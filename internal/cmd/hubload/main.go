// Command hubload measures waits fed by a [hub.Hub] against polling alone
// (issue 22, item 4), on the reference server command over loopback.
//
// It builds ./internal/cmd/refserver, and for each side starts a fresh
// server process (-addr 127.0.0.1:0 -allow-http-webhooks -balance 1000
// -render-scale R), creates a mix of generations with one client whose
// middleware counts every API request, and waits on each of them at once:
//
//   - hub: each generation carries the URL of an in-process receiver,
//     webhook.Handler(secret, hub.Deliver), and is waited on with
//     poll.Generation(ctx, c, id, poll.WithHub(hub), poll.WithKind(g.Kind)).
//     The receiver stamps the arrival of each delivery, so the time from an
//     event's arrival to its wait's return is measured in process.
//   - poll: no webhook, no hub: poll.Generation on its schedule by kind.
//   - dropped: each generation carries the URL of a receiver that answers
//     500 to every delivery and gives nothing to the hub; the waits still
//     use WithHub and WithKind, so only the hub's backstop checks end them.
//
// Every side gets the same generations (kinds, scripts, durations, in the
// same order, from -seed), so a dropped-side wait is compared with the
// polling wait of the same generation. Each side runs in a server process
// of its own, one side at a time; with -rounds N the order of the sides
// turns by one every round, so that none always goes first.
//
// Figures, per side and kind: API requests per generation (the create
// included), the time from the end of the render (the generation's
// responseDate, on the server's wall clock, which is this machine's) to the
// wait's return, and, for the hub, from the event's arrival at the receiver
// to the wait's return. The goals of issue 22 are checked at the end.
//
// Run from the module root (about 3 minutes a round at render scale 1):
//
//	go run ./internal/cmd/hubload -rounds 3
//	go run ./internal/cmd/hubload -render-scale 0.1 -sides hub,poll   # faster, see BENCHMARKS.md
//
// The load is bounded: at most 1,000 generations a side, 10 rounds and one
// hour (-max-time), and it only talks to loopback addresses.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mediagen/mediagen-go"
)

// Bounds on what one invocation may ask for.
const (
	maxGenerations = 1000
	maxRounds      = 10
	maxTime        = time.Hour
	maxCreating    = 64
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "hubload:", err)
		os.Exit(1)
	}
}

// config is a measurement's settings.
type config struct {
	mix      mix
	sides    []string
	rounds   int
	scale    float64
	seed     uint64
	creating int           // creates in flight at once
	maxTime  time.Duration // the whole run
	bin      string        // a refserver binary; built when empty
}

// mix is how many generations of each kind a side creates.
type mix struct{ image, audio, video int }

func (m mix) total() int { return m.image + m.audio + m.video }

func (m mix) String() string {
	return fmt.Sprintf("image=%d,audio=%d,video=%d", m.image, m.audio, m.video)
}

// The sides, in their first round's order.
const (
	sideHub     = "hub"
	sidePoll    = "poll"
	sideDropped = "dropped"
)

var allSides = []string{sideHub, sidePoll, sideDropped}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.maxTime)
	defer cancel()
	results, err := measure(ctx, cfg, stdout, stderr)
	if len(results) > 0 {
		report(stdout, cfg, results)
	}
	return err
}

// parseConfig reads the command line and checks it against the bounds.
func parseConfig(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("hubload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	mixFlag := fs.String("mix", "image=40,audio=30,video=30", "generations of each kind per side: images, voiceovers, logo reveals")
	sidesFlag := fs.String("sides", strings.Join(allSides, ","), "sides to run: hub, poll, dropped")
	fs.IntVar(&cfg.rounds, "rounds", 1, "rounds of every side, the order turned by one each round")
	fs.Float64Var(&cfg.scale, "render-scale", 1, "the servers' -render-scale (1: real render times; the hub's backstop delays are not scaled)")
	fs.Uint64Var(&cfg.seed, "seed", 22, "seed of the mix's order, scripts and clip durations")
	fs.IntVar(&cfg.creating, "creating", 8, "creates in flight at once")
	fs.DurationVar(&cfg.maxTime, "max-time", 30*time.Minute, "give up after this long, at most 1h")
	fs.StringVar(&cfg.bin, "refserver", "", "a built refserver command to run (default: go build ./internal/cmd/refserver)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if cfg.mix, err = parseMix(*mixFlag); err != nil {
		return cfg, err
	}
	if cfg.sides, err = parseSides(*sidesFlag); err != nil {
		return cfg, err
	}
	switch {
	case cfg.maxTime <= 0 || cfg.maxTime > maxTime:
		return cfg, fmt.Errorf("-max-time must be positive and at most %s", maxTime)
	case cfg.rounds < 1 || cfg.rounds > maxRounds:
		return cfg, fmt.Errorf("-rounds must be 1 to %d", maxRounds)
	case !(cfg.scale > 0 && cfg.scale <= 10) || math.IsInf(cfg.scale, 0):
		return cfg, errors.New("-render-scale must be in (0, 10]")
	case cfg.creating < 1 || cfg.creating > maxCreating:
		return cfg, fmt.Errorf("-creating must be 1 to %d", maxCreating)
	}
	return cfg, nil
}

// parseMix reads "image=40,audio=30,video=30"; kinds left out count 0.
func parseMix(s string) (mix, error) {
	var m mix
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		k, v, ok := strings.Cut(f, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 {
			return m, fmt.Errorf("-mix: %q is not kind=count", f)
		}
		switch mediagen.Kind(k) {
		case mediagen.KindImage:
			m.image = n
		case mediagen.KindAudio:
			m.audio = n
		case mediagen.KindVideo:
			m.video = n
		default:
			return m, fmt.Errorf("-mix: unknown kind %q (image, audio, video)", k)
		}
	}
	if n := m.total(); n < 1 || n > maxGenerations {
		return m, fmt.Errorf("-mix: %d generations; want 1 to %d", n, maxGenerations)
	}
	return m, nil
}

// parseSides reads a comma-separated list of distinct sides.
func parseSides(s string) ([]string, error) {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		switch f {
		case sideHub, sidePoll, sideDropped:
		default:
			return nil, fmt.Errorf("-sides: unknown side %q (hub, poll, dropped)", f)
		}
		for _, o := range out {
			if o == f {
				return nil, fmt.Errorf("-sides: %s twice", f)
			}
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, errors.New("-sides: none given")
	}
	return out, nil
}

// checkLoopback refuses a URL whose host is not a loopback address: the
// measurement must never be pointed at someone else's service.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("%q is not an http URL", raw)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
		return nil
	}
	return fmt.Errorf("%s is not a loopback address; hubload only talks to local servers", host)
}

// newHTTPClient returns a client keeping enough connections alive for
// every wait at once. Its dialer refuses any address that is not loopback
// once resolved, whatever a name resolved to.
func newHTTPClient(conns int) *http.Client {
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
		MaxIdleConns:        conns + 4,
		MaxIdleConnsPerHost: conns + 4,
	}}
}
