// Package serve is the reference server as a command line: its flags, the
// variables it prints and its serving until a signal. Two commands run it:
// internal/cmd/refserver, the standalone command, and cmd/mediagen's serve
// subcommand, a module of its own that may import this package because Go's
// internal rule goes by import path, and github.com/mediagen/mediagen-go/cmd/mediagen
// lies inside github.com/mediagen/mediagen-go.
//
// The flags are those of package flag, so each is accepted with one dash or
// two (-addr, --addr). Before serving, Run prints KEY=VALUE lines on stdout:
// MEDIAGEN_BASE_URL, MEDIAGEN_API_KEY and MEDIAGEN_WEBHOOK_SECRET of the first
// project, then MEDIAGEN_TEST_CONTROL_URL with -test-control, MEDIAGEN_UI_URL
// with -ui and MEDIAGEN_DEBUG_URL with -debug-addr. With -export each line
// starts with "export ", for pasting into a shell.
package serve

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
	"strconv"
	"sync"
	"time"

	"github.com/mediagen/mediagen-go/internal/refserver"
	"github.com/mediagen/mediagen-go/internal/refserver/delivery"
	"github.com/mediagen/mediagen-go/internal/refserver/fault"
	"github.com/mediagen/mediagen-go/internal/refserver/page"
)

// Command is the reference server command under one name.
type Command struct {
	// Name is the command as a user types it ("refserver", "mediagen serve"):
	// it starts the usage and the error lines.
	Name string
	// About is the text between the usage line and the flags; "" says what
	// the command prints and how it stops.
	About string
}

// UsageError is a command line that package flag could not parse; flag has
// already printed why, followed by the usage, on stderr.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// ExitCode is the status the command exits with after Run returned err, as
// programs built on package flag do: 0 when all went well or help was asked
// for (-h, -help, --help), 2 for a command line that does not parse, 1 for
// any other failure, which it reports on stderr as "<name>: <error>".
func (c Command) ExitCode(err error, stderr io.Writer) int {
	var usage *UsageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		return 2
	}
	fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
	return 1
}

const defaultAbout = `Runs the reference server of the media generation service. It prints
MEDIAGEN_BASE_URL, MEDIAGEN_API_KEY and MEDIAGEN_WEBHOOK_SECRET on stdout,
then serves until SIGINT or SIGTERM.
`

// printUsage writes the command's usage to w.
func (c Command) printUsage(fs *flag.FlagSet, w io.Writer) {
	about := c.About
	if about == "" {
		about = defaultAbout
	}
	fmt.Fprintf(w, "Usage: %s [flags]\n\n%s\nFlags:\n", c.Name, about)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// settings are the parsed flags.
type settings struct {
	addr, debugAddr                string
	keys                           []string
	balance, scale                 float64
	allowHTTP, testControl, export bool
	ui                             bool
	faults                         fault.Config
}

// parse reads the flags of args. When they ask for help it prints the usage
// on stdout and returns flag.ErrHelp; when they do not parse it returns a
// *UsageError after flag printed the error and the usage on stderr.
func (c Command) parse(args []string, stdout, stderr io.Writer) (*settings, error) {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	// Parse calls Usage both for -h and for a bad flag; which it was is
	// known only once Parse returns, and decides where the usage goes.
	fs.Usage = func() {}
	var s settings
	fs.StringVar(&s.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.Func("api-key", "API key of a project (repeatable); one is made up when none is given", func(k string) error {
		if k == "" {
			return errors.New("empty API key")
		}
		s.keys = append(s.keys, k)
		return nil
	})
	fs.Float64Var(&s.balance, "balance", 100, "starting balance of every project, in USD")
	fs.Float64Var(&s.scale, "render-scale", 1, "multiplier of render and training durations (0.01 makes them fast)")
	fs.BoolVar(&s.allowHTTP, "allow-http-webhooks", false, "also accept webhook URLs on loopback hosts, http:// included, for local receivers (the service takes only public https)")
	fs.StringVar(&s.debugAddr, "debug-addr", "", "serve pprof and the live heap on this address (keep it loopback)")
	fs.BoolVar(&s.testControl, "test-control", false, "serve the test-control API under "+refserver.TestControlPrefix+"/ (clock, balance, webhook secret, voices, faults)")
	fs.BoolVar(&s.ui, "ui", false, "serve a page under "+page.Prefix+" that shows a project's generations, their outputs, its webhook deliveries and, with -test-control, its test controls (it asks for the API key)")
	fs.BoolVar(&s.export, "export", false, "print the variables as \"export KEY=VALUE\" lines, for pasting into a shell")
	fs.Int64Var(&s.faults.Seed, "fault-seed", 0, "seed of the fault draws")
	fs.Float64Var(&s.faults.RenderError, "fault-render-error", 0, "probability a render or clone training ends in error")
	fs.Float64Var(&s.faults.RenderTimeout, "fault-render-timeout", 0, "probability a render or clone training times out")
	fs.Float64Var(&s.faults.HTTPStatus, "fault-http", 0, "probability an API answer is replaced by one of -fault-statuses")
	fs.Func("fault-statuses", "comma-separated error statuses for -fault-http (default 500,502,503)", func(v string) error {
		st, err := fault.ParseStatuses(v)
		s.faults.Statuses = st
		return err
	})
	fs.DurationVar(&s.faults.RetryAfter, "fault-retry-after", 0, "Retry-After of an injected 429")
	fs.Float64Var(&s.faults.DropBefore, "fault-drop-before", 0, "probability a connection is dropped before the request is processed")
	fs.Float64Var(&s.faults.DropAfter, "fault-drop-after", 0, "probability a connection is dropped after processing, before the answer")
	fs.DurationVar(&s.faults.Latency, "fault-latency", 0, "delay added to every API answer")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.printUsage(fs, stdout)
			return nil, err
		}
		c.printUsage(fs, stderr)
		return nil, &UsageError{err}
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected argument %q: every setting is a flag", fs.Arg(0))
		fmt.Fprintln(stderr, err)
		c.printUsage(fs, stderr)
		return nil, &UsageError{err}
	}
	if s.scale <= 0 {
		return nil, errors.New("-render-scale must be positive")
	}
	// Reported as an error here rather than as WithFaults' panic.
	if err := s.faults.Validate(); err != nil {
		return nil, err
	}
	if len(s.keys) == 0 {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		s.keys = []string{"mg_test_" + hex.EncodeToString(b)}
	}
	return &s, nil
}

// Run parses args, serves until ctx is done, then shuts down gracefully.
// When args ask for help it prints the usage on stdout and returns
// flag.ErrHelp; when they do not parse it returns a *UsageError after flag
// printed the error and the usage on stderr. Webhook deliveries that fail
// twice are reported on stderr.
func (c Command) Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	s, err := c.parse(args, stdout, stderr)
	if err != nil {
		return err
	}
	var logMu sync.Mutex // results arrive on many goroutines
	opts := []refserver.Option{
		refserver.WithRenderScale(s.scale),
		refserver.WithWebhookDelivery(delivery.Options{OnResult: func(r delivery.Result) {
			if r.Delivered {
				return
			}
			logMu.Lock()
			defer logMu.Unlock()
			fmt.Fprintf(stderr, "%s: webhook %s to %s dropped after %d attempts (status %d, error %v)\n", c.Name, r.Event, r.URL, r.Attempts, r.Status, r.Err)
		}}),
	}
	// Test control switches faults at run time, so it needs an injector even
	// when no -fault flag asks for one yet.
	if faulty(s.faults) || s.testControl {
		opts = append(opts, refserver.WithFaults(s.faults))
	}
	if s.testControl {
		// Real time, so renders progress on their own, plus an offset that
		// the test-control API grows.
		opts = append(opts, refserver.WithClock(refserver.NewOffsetClock()))
	}
	for _, k := range s.keys {
		opts = append(opts, refserver.WithProject(k, s.balance))
	}
	if s.allowHTTP {
		opts = append(opts, refserver.WithAllowHTTPWebhooks())
	}
	srv := refserver.New(opts...)
	defer srv.Close()

	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return err
	}
	var debugLn net.Listener
	if s.debugAddr != "" {
		if debugLn, err = net.Listen("tcp", s.debugAddr); err != nil {
			ln.Close()
			return err
		}
	}
	prefix := ""
	if s.export {
		prefix = "export "
	}
	first, _ := srv.Project(s.keys[0])
	base := "http://" + dialable(ln.Addr())
	fmt.Fprintf(stdout, "%sMEDIAGEN_BASE_URL=%s\n%sMEDIAGEN_API_KEY=%s\n%sMEDIAGEN_WEBHOOK_SECRET=%s\n",
		prefix, base, prefix, first.APIKey, prefix, first.WebhookSecret)

	var handler http.Handler = srv
	if s.testControl {
		fmt.Fprintf(stdout, "%sMEDIAGEN_TEST_CONTROL_URL=%s%s\n", prefix, base, refserver.TestControlPrefix)
		handler = withTestControl(srv)
	}
	if s.ui {
		fmt.Fprintf(stdout, "%sMEDIAGEN_UI_URL=%s%s\n", prefix, base, page.Prefix)
		handler = withPage(handler, page.Handler(srv, page.Options{TestControl: s.testControl}))
	}
	if debugLn != nil {
		fmt.Fprintf(stdout, "%sMEDIAGEN_DEBUG_URL=http://%s\n", prefix, dialable(debugLn.Addr()))
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

// withPage serves the page beside next, outside the fault injector, so that
// the page still shows what happens while faults are on.
func withPage(next, ui http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if page.IsPath(r.URL.Path) {
			ui.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
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
