// Command refserver runs the reference server of the media generation
// service standalone, for tests that do not run in Go or that want one
// server for many processes:
//
//	go run ./internal/cmd/refserver -addr 127.0.0.1:8080 -api-key KEY -balance 100 -render-scale 0.01
//
// It prints MEDIAGEN_BASE_URL, MEDIAGEN_API_KEY and MEDIAGEN_WEBHOOK_SECRET
// of the first project on stdout, one per line, then serves until SIGINT or
// SIGTERM. Webhook events are delivered, signed with the project's secret.
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
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/mediagen/mediagen-go/internal/refserver"
	"github.com/mediagen/mediagen-go/internal/refserver/delivery"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "refserver:", err)
		os.Exit(1)
	}
}

// run parses args, serves until ctx is done, then shuts down gracefully.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("refserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
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
	allowHTTP := fs.Bool("allow-http-webhooks", false, "accept http:// webhook URLs on loopback hosts")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *scale <= 0 {
		return errors.New("-render-scale must be positive")
	}
	if len(keys) == 0 {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		keys = []string{"mg_test_" + hex.EncodeToString(b)}
	}

	sender := delivery.New(delivery.Options{})
	defer sender.Close()
	var srv *refserver.Server
	opts := []refserver.Option{
		refserver.WithRenderScale(*scale),
		refserver.WithEventSink(func(ev refserver.Event) {
			if ev.WebhookURL == "" {
				return
			}
			secrets := srv.WebhookSecrets(ev.ProjectAPIKey)
			if len(secrets) == 0 {
				return
			}
			if ev.Generation != nil {
				_ = sender.SendGeneration(ev.WebhookURL, secrets, ev.Name, ev.Generation)
			} else if ev.Voice != nil {
				_ = sender.SendVoice(ev.WebhookURL, secrets, ev.Name, ev.Voice)
			}
		}),
	}
	for _, k := range keys {
		opts = append(opts, refserver.WithProject(k, *balance))
	}
	if *allowHTTP {
		opts = append(opts, refserver.WithAllowHTTPWebhooks())
	}
	srv = refserver.New(opts...)
	defer srv.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	first, _ := srv.Project(keys[0])
	fmt.Fprintf(stdout, "MEDIAGEN_BASE_URL=http://%s\nMEDIAGEN_API_KEY=%s\nMEDIAGEN_WEBHOOK_SECRET=%s\n", dialable(ln.Addr()), first.APIKey, first.WebhookSecret)

	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
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

// dialable turns a listener address into one a client can dial: a wildcard
// host (":8080", "0.0.0.0:8080") becomes the loopback address.
func dialable(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return addr.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}
