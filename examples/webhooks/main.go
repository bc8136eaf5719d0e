// Webhooks: submit three image generations with a webhook URL and receive
// their signed events instead of polling; show that a repeated delivery is
// acknowledged without being processed twice.
//
// With MEDIAGEN_API_KEY set it talks to the service (and spends money). The
// service posts only to an https address it can reach, so set
// MEDIAGEN_WEBHOOK_URL to a public https URL (a tunnel or a reverse proxy)
// that forwards to MEDIAGEN_WEBHOOK_ADDR (default :8080), where this program
// listens, and MEDIAGEN_WEBHOOK_SECRET to the project's signing secret. With
// no key it starts an in-process reference server and a loopback receiver,
// which gets the events over plain http: the reference server, unlike the
// service, accepts http to a loopback address (clienttest always allows it;
// the refserver command does with -allow-http-webhooks):
//
//	go run ./examples/webhooks
//
// The receiver records the deliveries it has taken in a SQLite file, or in
// PostgreSQL when MEDIAGEN_WEBHOOK_DB_DSN is set (for example
// postgres://user:pass@host/db), which replicas of a receiver share.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite", pure Go

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/webhook"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// received is an event as the receiver got it, with its raw signed body.
type received struct {
	event *webhook.Event
	body  []byte
}

func run(ctx context.Context, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()

	key := os.Getenv("MEDIAGEN_API_KEY")
	secret := os.Getenv("MEDIAGEN_WEBHOOK_SECRET")
	hookURL := os.Getenv("MEDIAGEN_WEBHOOK_URL")
	var c *client.Client
	now := time.Now // the clock deliveries are signed and verified by
	if key == "" {
		// No key: serve the whole interface in-process. Its receiver below is
		// plain http on loopback, which the test server allows.
		srv, err := clienttest.Start(clienttest.WithBalance(5))
		if err != nil {
			return err
		}
		defer srv.Close()
		c = srv.Client()
		secret, hookURL = srv.WebhookSecret(), "" // the receiver starts below
		// The test server's clock moves only when told: let it run, 10x
		// faster than the wall clock, and verify deliveries against it.
		go func() {
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					srv.Advance(50 * time.Millisecond)
				}
			}
		}()
		now = srv.Now
		fmt.Fprintln(out, "no MEDIAGEN_API_KEY: using an in-process reference server")
	} else {
		if secret == "" || hookURL == "" {
			return errors.New("with MEDIAGEN_API_KEY set, set MEDIAGEN_WEBHOOK_SECRET and MEDIAGEN_WEBHOOK_URL too")
		}
		var err error
		if c, err = client.New(key); err != nil {
			return err
		}
	}

	store, closeStore, err := openStore(ctx, out)
	if err != nil {
		return err
	}
	defer closeStore()

	// The handler verifies each signature, drops deliveries it has already
	// taken (by the store, so across restarts and replicas), and answers
	// within the service's 5-second window.
	var mu sync.Mutex
	calls := map[string]int{} // handler calls per generation id
	events := make(chan received, 16)
	handler := webhook.Handler(secret, func(ctx context.Context, ev *webhook.Event) error {
		if ev.Generation == nil {
			return nil // a voice event: not ours to handle here
		}
		mu.Lock()
		calls[ev.Generation.ID]++
		mu.Unlock()
		// ev.Raw shares the request's buffer; keep a copy.
		events <- received{ev, bytes.Clone(ev.Raw)}
		return nil
	}, webhook.WithStore(store), webhook.WithNow(now))
	mux := http.NewServeMux()
	mux.Handle("/webhooks", handler)
	if hookURL == "" {
		recv := httptest.NewServer(mux)
		defer recv.Close()
		hookURL = recv.URL + "/webhooks"
	} else {
		l, err := net.Listen("tcp", envOr("MEDIAGEN_WEBHOOK_ADDR", ":8080"))
		if err != nil {
			return err
		}
		recv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go recv.Serve(l)
		defer recv.Close()
	}

	waiting := map[string]bool{}
	for _, prompt := range []string{"a paper boat on a rain puddle", "a red fox in fresh snow", "a lighthouse at dusk"} {
		g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: prompt}, client.WithWebhookURL(hookURL))
		if err != nil {
			return err
		}
		waiting[g.ID] = true
		fmt.Fprintf(out, "submitted %s\n", g.ID)
	}

	// Webhooks are best effort: a real program would fall back to
	// poll.Generations for whatever has not arrived in time.
	var first received
	for len(waiting) > 0 {
		select {
		case r := <-events:
			g := r.event.Generation
			if !waiting[g.ID] {
				continue // another generation of the project
			}
			delete(waiting, g.ID)
			mime := g.Output.MIME
			if mime == "" {
				mime = "-" // failed renders have no output
			}
			fmt.Fprintf(out, "event %s %s %s\n", r.event.Name, g.ID, mime)
			if first.event == nil {
				first = r
			}
		case <-ctx.Done():
			return fmt.Errorf("%d events did not arrive: %w", len(waiting), ctx.Err())
		}
	}

	// The service retries a delivery it did not see acknowledged, so the
	// same event can come twice. Replay the first one, freshly signed.
	req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(first.body))
	webhook.SetHeaders(req.Header, []string{secret}, now(), first.body)
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	id := first.event.Generation.ID
	mu.Lock()
	n := calls[id]
	mu.Unlock()
	fmt.Fprintf(out, "duplicate of %s: answered %d, handler called %d time(s)\n", id, rec.Code, n)
	return nil
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// openStore opens the store of taken deliveries: PostgreSQL at
// MEDIAGEN_WEBHOOK_DB_DSN when set, else a SQLite file in a temporary folder
// (a real receiver keeps its file). Rows older than 48 hours are deleted in
// the background.
func openStore(ctx context.Context, out io.Writer) (*webhook.SQLStore, func(), error) {
	driver, dialect, dsn, dir := "pgx", webhook.DialectPostgreSQL, os.Getenv("MEDIAGEN_WEBHOOK_DB_DSN"), ""
	if dsn == "" {
		var err error
		if dir, err = os.MkdirTemp("", "webhooks-"); err != nil {
			return nil, nil, err
		}
		driver, dialect = "sqlite", webhook.DialectSQLite
		dsn = "file:" + filepath.Join(dir, "deliveries.db") + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	closeAll := func() {
		db.Close()
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	store, err := webhook.NewSQLStore(db, webhook.WithDialect(dialect))
	if err == nil {
		err = store.CreateTable(ctx)
	}
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	fmt.Fprintf(out, "delivery store: %s\n", dialect)
	return store, closeAll, nil
}
