// Webhooks: a receiver and waits together, as a program that submits work
// and must know when it is done would run them. Signed events end the waits
// at once through a hub.Hub; polling runs only as a backstop for events
// that were lost; each finished image is saved before its URL expires; and a
// repeated delivery is acknowledged without being processed twice.
//
// With MEDIAGEN_API_KEY set it talks to the service (and spends money). The
// service posts only to an https address it can reach, so set
// MEDIAGEN_WEBHOOK_URL to a public https URL (a tunnel or a reverse proxy)
// that forwards to MEDIAGEN_WEBHOOK_ADDR (default :8080), where this program
// listens, and MEDIAGEN_WEBHOOK_SECRET to the project's signing secret. With
// no key it starts an in-process reference server on the wall clock and a
// loopback receiver, which gets the events over plain http: the reference
// server, unlike the service, accepts http to a loopback address
// (clienttest always allows it; the refserver command does with
// -allow-http-webhooks):
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

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/webhook"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	out := &lockedWriter{w: w} // the receiver writes from its own goroutines

	key := os.Getenv("MEDIAGEN_API_KEY")
	secret := os.Getenv("MEDIAGEN_WEBHOOK_SECRET")
	hookURL := os.Getenv("MEDIAGEN_WEBHOOK_URL")
	var c *client.Client
	if key == "" {
		// No key: serve the whole interface in-process, on the wall clock so
		// that its webhooks arrive while the waits below wait. Its receiver
		// is plain http on loopback, which the test server allows.
		srv, err := clienttest.Start(clienttest.WithWallClock())
		if err != nil {
			return err
		}
		defer srv.Close()
		c = srv.Client()
		secret, hookURL = srv.WebhookSecret(), "" // the receiver starts below
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
	// taken (by the store, so across restarts and replicas), answers within
	// the service's 5-second window, and gives every event to the hub.
	h, err := hub.New()
	if err != nil {
		return err
	}
	var mu sync.Mutex
	calls := map[string]int{} // hub deliveries per generation id
	var first []byte          // the first event's signed body, to replay
	var firstID string        // and its generation's id
	handler, err := webhook.Handler(secret, func(ctx context.Context, ev *webhook.Event) error {
		if ev.Generation != nil {
			mu.Lock()
			calls[ev.Generation.ID]++
			if first == nil {
				first, firstID = bytes.Clone(ev.Raw), ev.Generation.ID // ev.Raw shares the request's buffer
			}
			mu.Unlock()
			fmt.Fprintf(out, "event %s %s\n", ev.Name, ev.Generation.ID)
		}
		return h.Deliver(ctx, ev)
	}, webhook.WithStore(store))
	if err != nil {
		return err
	}
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

	var ids []string
	for _, prompt := range []string{"a paper boat on a rain puddle", "a red fox in fresh snow", "a lighthouse at dusk"} {
		g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: prompt}, client.WithWebhookURL(hookURL))
		if err != nil {
			return err
		}
		ids = append(ids, g.ID)
		fmt.Fprintf(out, "submitted %s\n", g.ID)
	}

	// The events end the waits; a wait whose event was lost still ends, by
	// a backstop check. Each done image is saved before its URL expires.
	dir, err := os.MkdirTemp("", "webhooks-out-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir) // a real receiver keeps its outputs
	results, err := poll.Generations(ctx, c, ids, poll.WithHub(h), poll.WithKind(mediagen.KindImage), poll.WithSaveTo(dir))
	if err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintf(out, "done %s %s, saved\n", r.ID, r.Generation.Output.MIME)
	}

	// The service retries a delivery it did not see acknowledged, so the
	// same event can come twice. Replay the first one, freshly signed.
	mu.Lock()
	body, id := first, firstID
	mu.Unlock()
	if body == nil {
		return errors.New("no event arrived: the waits ended by polling alone")
	}
	req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
	webhook.SetHeaders(req.Header, []string{secret}, time.Now(), body)
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	mu.Lock()
	n := calls[id]
	mu.Unlock()
	fmt.Fprintf(out, "duplicate of %s: answered %d, handler called %d time(s)\n", id, rec.Code, n)
	return nil
}

// lockedWriter lets goroutines share one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
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
	driver, dialect, dsn, dir := "pgx", mediagen.PostgreSQL, os.Getenv("MEDIAGEN_WEBHOOK_DB_DSN"), ""
	if dsn == "" {
		var err error
		if dir, err = os.MkdirTemp("", "webhooks-"); err != nil {
			return nil, nil, err
		}
		driver, dialect = "sqlite", mediagen.SQLite
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
	store, err := webhook.OpenSQLStore(ctx, db, dialect)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	fmt.Fprintf(out, "delivery store: %s\n", dialect)
	return store, closeAll, nil
}
