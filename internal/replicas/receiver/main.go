// Command receiver is one replica of a webhook receiver, for the replicas
// test: it verifies deliveries with MEDIAGEN_WEBHOOK_SECRET, drops repeats
// through a webhook.SQLStore and hands each event to a hub.Hub that shares
// it through a hub.SQLExchange, both in the database of -dialect and -dsn.
// It prints "URL=<its url>" once listening, then "deliver <id> <unix ns>"
// for each generation event as it reaches the hub, and serves until SIGINT
// or SIGTERM.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	_ "modernc.org/sqlite"             // registers "sqlite"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/webhook"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "receiver:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	dialect := flag.String("dialect", "sqlite", "shared database: sqlite or postgres")
	dsn := flag.String("dsn", "", "shared database DSN")
	flag.Parse()
	secret := os.Getenv("MEDIAGEN_WEBHOOK_SECRET")
	if secret == "" {
		return errors.New("MEDIAGEN_WEBHOOK_SECRET is not set")
	}

	d, driver := mediagen.SQLite, "sqlite"
	if *dialect == "postgres" {
		d, driver = mediagen.PostgreSQL, "pgx"
	}
	db, err := sql.Open(driver, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := webhook.OpenSQLStore(ctx, db, d)
	if err != nil {
		return err
	}
	x, err := hub.OpenSQLExchange(ctx, db, d)
	if err != nil {
		return err
	}
	h, err := hub.New(hub.WithExchange(x, 0, func(err error) { fmt.Fprintln(os.Stderr, "receiver:", err) }))
	if err != nil {
		return err
	}
	defer h.Close()

	var mu sync.Mutex
	deliver := func(ctx context.Context, ev *webhook.Event) error {
		at := time.Now()
		err := h.Deliver(ctx, ev)
		if ev.Generation != nil {
			mu.Lock()
			fmt.Printf("deliver %s %d\n", ev.Generation.ID, at.UnixNano())
			mu.Unlock()
		}
		return err
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	handler, err := webhook.Handler(secret, deliver, webhook.WithStore(store))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	fmt.Printf("URL=http://%s/webhook\n", ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Shutdown waits for deliveries in progress. A connection the server's
	// client opened and never used counts as busy for its first 5 s, so
	// give it longer than that before cutting what is left.
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
		return srv.Close()
	} else if err != nil {
		return err
	}
	return nil
}
