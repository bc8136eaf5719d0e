// Command refserver runs the reference server of the media generation
// service standalone, for tests that do not run in Go or that want one
// server for many processes:
//
//	go run ./internal/cmd/refserver -addr 127.0.0.1:8080 -api-key KEY -balance 100 -render-scale 0.01
//
// It prints MEDIAGEN_BASE_URL, MEDIAGEN_API_KEY and MEDIAGEN_WEBHOOK_SECRET
// of the first project on stdout, one per line, then serves until SIGINT or
// SIGTERM. Webhook events are delivered, signed with the project's secret;
// deliveries that fail twice are reported on stderr. refserver -h prints
// every flag and exits 0; a command line that does not parse exits 2.
//
// Faults are off unless a -fault flag is given. Probabilities are in [0, 1];
// the three HTTP ones are exclusive per request and must not add up to more
// than 1, likewise the two render ones:
//
//	-fault-seed N            seed of the fault draws: the same seed and requests give the same faults
//	-fault-render-error P    probability a render or clone training ends in error (refunded)
//	-fault-render-timeout P  probability a render or clone training times out (refunded)
//	-fault-http P            probability an API answer is replaced by an error status, unprocessed
//	-fault-statuses LIST     the replacement statuses, e.g. 500,502,503,429 (default 500,502,503)
//	-fault-retry-after D     Retry-After of an injected 429, e.g. 2s
//	-fault-drop-before P     probability the connection drops before the request is processed
//	-fault-drop-after P      probability the connection drops after processing, before the answer
//	-fault-latency D         delay added to every API answer, e.g. 300ms
//
// HTTP faults apply to the API under /v3/, not to the storage host. For
// example, to test a client's retries:
//
//	go run ./internal/cmd/refserver -render-scale 0.01 -fault-seed 1 -fault-http 0.2 -fault-statuses 503,429 -fault-drop-after 0.1
//
// -test-control serves the test-control API under /test/v1/, described by
// openapi/testcontrol.json, and prints MEDIAGEN_TEST_CONTROL_URL as a fourth
// line. With it a test in any language can move the clock, read and set its
// project's balance, rotate its webhook secret, retire a catalog voice and
// switch faults while the server runs; each call carries a project's API key
// in the Authorization header, as on /v3. The server's clock is then real
// time plus an offset that only POST /test/v1/clock/advance grows. Without
// the flag those paths answer 404 like any unknown path:
//
//	go run ./internal/cmd/refserver -test-control -allow-http-webhooks -api-key KEY
//	curl -s -X POST -H 'Authorization: KEY' -d '{"duration":"24h1m"}' http://127.0.0.1:8080/test/v1/clock/advance
//
// -debug-addr ADDR serves net/http/pprof under /debug/pprof/ and the live
// heap after a collection under /debug/heap on a second listener, and
// prints its URL as MEDIAGEN_DEBUG_URL after the other lines;
// internal/cmd/refload reads it.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/mediagen/mediagen-go/internal/refserver"
	"github.com/mediagen/mediagen-go/internal/refserver/delivery"
	"github.com/mediagen/mediagen-go/internal/refserver/fault"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// usageError is a command line that flag could not parse; flag has already
// printed why, and run the usage.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// exitCode is the status the command exits with after run returned err, as
// programs built on package flag do: 0 when all went well or help was asked
// for (-h, -help), 2 for a command line that does not parse, 1 for any other
// failure, which it reports on stderr.
func exitCode(err error, stderr io.Writer) int {
	var usage *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		return 2
	}
	fmt.Fprintln(stderr, "refserver:", err)
	return 1
}

// printUsage writes the command's usage to w.
func printUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `Usage: refserver [flags]

Runs the reference server of the media generation service. It prints
MEDIAGEN_BASE_URL, MEDIAGEN_API_KEY and MEDIAGEN_WEBHOOK_SECRET on stdout,
then serves until SIGINT or SIGTERM.

Flags:
`)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// run parses args, serves until ctx is done, then shuts down gracefully.
// When args ask for help it prints the usage on stdout and returns
// flag.ErrHelp; when they do not parse it returns a *usageError after flag
// printed the error and the usage on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("refserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// Parse calls Usage both for -h and for a bad flag; which it was is
	// known only once Parse returns, and decides where the usage goes.
	fs.Usage = func() {}
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	var keys []string
	fs.Func("api-key", "API key of a project (repeatable); one is made up when none is given", func(k string) error {
		if k == "" {
			return errors.New("empty API key")
		}
		keys = append(keys, k)
		return nil
	})
	balance := fs.Float64("balance", 100, "starting balance of every project, in USD")
	scale := fs.Float64("render-scale", 1, "multiplier of render and training durations (0.01 makes them fast)")
	allowHTTP := fs.Bool("allow-http-webhooks", false, "also accept webhook URLs on loopback hosts, http:// included, for local receivers (the service takes only public https)")
	debugAddr := fs.String("debug-addr", "", "serve pprof and the live heap on this address (keep it loopback)")
	testControl := fs.Bool("test-control", false, "serve the test-control API under "+refserver.TestControlPrefix+"/ (clock, balance, webhook secret, voices, faults)")
	var faults fault.Config
	fs.Int64Var(&faults.Seed, "fault-seed", 0, "seed of the fault draws")
	fs.Float64Var(&faults.RenderError, "fault-render-error", 0, "probability a render or clone training ends in error")
	fs.Float64Var(&faults.RenderTimeout, "fault-render-timeout", 0, "probability a render or clone training times out")
	fs.Float64Var(&faults.HTTPStatus, "fault-http", 0, "probability an API answer is replaced by one of -fault-statuses")
	fs.Func("fault-statuses", "comma-separated error statuses for -fault-http (default 500,502,503)", func(v string) error {
		st, err := fault.ParseStatuses(v)
		faults.Statuses = st
		return err
	})
	fs.DurationVar(&faults.RetryAfter, "fault-retry-after", 0, "Retry-After of an injected 429")
	fs.Float64Var(&faults.DropBefore, "fault-drop-before", 0, "probability a connection is dropped before the request is processed")
	fs.Float64Var(&faults.DropAfter, "fault-drop-after", 0, "probability a connection is dropped after processing, before the answer")
	fs.DurationVar(&faults.Latency, "fault-latency", 0, "delay added to every API answer")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, stdout)
			return err
		}
		printUsage(fs, stderr)
		return &usageError{err}
	}
	if *scale <= 0 {
		return errors.New("-render-scale must be positive")
	}
	// Reported as an error here rather than as WithFaults' panic.
	if err := faults.Validate(); err != nil {
		return err
	}
	if len(keys) == 0 {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		keys = []string{"mg_test_" + hex.EncodeToString(b)}
	}

	var logMu sync.Mutex // results arrive on many goroutines
	opts := []refserver.Option{
		refserver.WithRenderScale(*scale),
		refserver.WithWebhookDelivery(delivery.Options{OnResult: func(r delivery.Result) {
			if r.Delivered {
				return
			}
			logMu.Lock()
			defer logMu.Unlock()
			fmt.Fprintf(stderr, "refserver: webhook %s to %s dropped after %d attempts (status %d, error %v)\n", r.Event, r.URL, r.Attempts, r.Status, r.Err)
		}}),
	}
	// Test control switches faults at run time, so it needs an injector even
	// when no -fault flag asks for one yet.
	if faulty(faults) || *testControl {
		opts = append(opts, refserver.WithFaults(faults))
	}
	if *testControl {
		// Real time, so renders progress on their own, plus an offset that
		// the test-control API grows.
		opts = append(opts, refserver.WithClock(refserver.NewOffsetClock()))
	}
	for _, k := range keys {
		opts = append(opts, refserver.WithProject(k, *balance))
	}
	if *allowHTTP {
		opts = append(opts, refserver.WithAllowHTTPWebhooks())
	}
	srv := refserver.New(opts...)
	defer srv.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	var debugLn net.Listener
	if *debugAddr != "" {
		if debugLn, err = net.Listen("tcp", *debugAddr); err != nil {
			ln.Close()
			return err
		}
	}
	first, _ := srv.Project(keys[0])
	base := "http://" + dialable(ln.Addr())
	fmt.Fprintf(stdout, "MEDIAGEN_BASE_URL=%s\nMEDIAGEN_API_KEY=%s\nMEDIAGEN_WEBHOOK_SECRET=%s\n", base, first.APIKey, first.WebhookSecret)

	var handler http.Handler = srv
	if *testControl {
		fmt.Fprintf(stdout, "MEDIAGEN_TEST_CONTROL_URL=%s%s\n", base, refserver.TestControlPrefix)
		handler = withTestControl(srv)
	}
	if debugLn != nil {
		fmt.Fprintf(stdout, "MEDIAGEN_DEBUG_URL=http://%s\n", dialable(debugLn.Addr()))
		debug := &http.Server{Handler: debugHandler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = debug.Serve(debugLn) }()
		defer debug.Close()
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return hs.Shutdown(shutdown)
}

// withTestControl serves the test-control API beside srv, outside its fault
// injector, so that a test can always heal the server it broke.
func withTestControl(srv *refserver.Server) http.Handler {
	tc := srv.TestControl()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refserver.IsTestControlPath(r.URL.Path) {
			tc.ServeHTTP(w, r)
			return
		}
		srv.ServeHTTP(w, r)
	})
}

// debugHandler serves the profiles of net/http/pprof and /debug/heap, the
// live heap in bytes after a collection, as {"heapAlloc": N}.
func debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/heap", func(w http.ResponseWriter, _ *http.Request) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"heapAlloc\":%d}\n", m.HeapAlloc)
	})
	return mux
}

// faulty reports whether any fault flag asks for a fault.
func faulty(c fault.Config) bool {
	return c.RenderError > 0 || c.RenderTimeout > 0 || c.HTTPStatus > 0 ||
		c.DropBefore > 0 || c.DropAfter > 0 || c.Latency > 0
}

// dialable turns a listener address into one a client can dial: a wildcard
// host (":8080", "0.0.0.0:8080") becomes the loopback address.
func dialable(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return addr.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}
