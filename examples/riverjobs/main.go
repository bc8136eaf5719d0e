// Riverjobs: generations as River jobs. A worker submits each job once
// with its key (recorded in the queue's database), snoozes while the
// service renders, is woken by the generation's webhook event, saves the
// outputs and records the generation as the job's output; a budget shared
// by every worker of the queue caps what they spend together.
//
// The queue is a SQLite file, the one-machine default (DATABASE_URL, a
// PostgreSQL URL, puts it on PostgreSQL for many machines). With
// MEDIAGEN_API_KEY set it talks to the service (and spends money; it then
// also needs MEDIAGEN_WEBHOOK_URL, a public https address that reaches this
// program's port 8089, and MEDIAGEN_WEBHOOK_SECRET). With no key it starts
// an in-process reference server, so it runs anywhere:
//
//	cd examples/riverjobs && go run .
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	_ "modernc.org/sqlite"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	riverjob "github.com/mediagen/mediagen-go/river"
	"github.com/mediagen/mediagen-go/webhook"
)

func main() {
	if err := run(context.Background(), os.Stdout, "riverjobs-output"); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()

	// The queue's database: River's tables and the store's, side by side.
	db, driver, dialect, err := openQueue(filepath.Join(dir, "queue.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		return err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return err
	}
	store, err := riverjob.Open(ctx, db, dialect)
	if err != nil {
		return err
	}

	// The client records its charging calls in the store's journal.
	secret, hookURL := os.Getenv("MEDIAGEN_WEBHOOK_SECRET"), os.Getenv("MEDIAGEN_WEBHOOK_URL")
	var c *client.Client
	if os.Getenv("MEDIAGEN_API_KEY") == "" {
		srv, err := clienttest.Start(clienttest.WithWallClock())
		if err != nil {
			return err
		}
		defer srv.Close()
		if c, err = srv.ClientFor(srv.APIKey(), client.WithJournal(store.Journal())); err != nil {
			return err
		}
		secret = srv.WebhookSecret()
		fmt.Fprintln(out, "no MEDIAGEN_API_KEY: using an in-process reference server")
	} else if c, err = client.New("", client.WithJournal(store.Journal())); err != nil {
		return err
	}

	// The worker, and a River client that runs it.
	rc, err := river.NewClient(driver, &river.Config{})
	if err != nil {
		return err
	}
	waker, err := riverjob.NewWaker(rc, store)
	if err != nil {
		return err
	}
	hooks, err := webhook.Handler(secret, waker.Deliver)
	if err != nil {
		return err
	}
	if hookURL == "" { // the reference server delivers to loopback
		recv := httptest.NewServer(hooks)
		defer recv.Close()
		hookURL = recv.URL
	} else {
		go func() { _ = http.ListenAndServe(":8089", hooks) }()
	}
	w, err := riverjob.NewWorker(c, store, riverjob.WithSaveTo(dir), riverjob.WithWebhookURL(hookURL))
	if err != nil {
		return err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	rc, err = river.NewClient(driver, &river.Config{
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}},
		Workers: workers,
	})
	if err != nil {
		return err
	}
	if err := rc.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = rc.Stop(context.WithoutCancel(ctx)) }()

	// A budget for every worker of the queue, then the jobs: unique by key,
	// so running the program again adds none.
	if err := store.SetBudget(ctx, river.QueueDefault, 1.00); err != nil {
		return err
	}
	jobs := map[string]client.Args{
		"order-1": client.ImageGenerationArgs{Prompt: "a kite over the dunes"},
		"order-2": client.VoiceoverArgs{VoiceID: "ava-warm-narrator", Script: "Welcome aboard."},
		"order-3": client.ImageGenerationArgs{Prompt: "a lighthouse at dusk", AspectRatio: client.Aspect16x9},
	}
	for key, a := range jobs {
		args, err := riverjob.NewArgs(key, a)
		if err != nil {
			return err
		}
		if _, err := rc.Insert(ctx, args, nil); err != nil {
			return err
		}
	}

	// Wait for the queue to empty, then read what each job recorded.
	for {
		p, err := store.Progress(ctx, river.QueueDefault)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%d queued, %d rendering, %d done, %d failed\n", p.Queued, p.Rendering, p.Done, p.Failed)
		if p.Queued+p.Rendering == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	done, err := rc.JobList(ctx, river.NewJobListParams().States(rivertype.JobStateCompleted))
	if err != nil {
		return err
	}
	for _, j := range done.Jobs {
		var res riverjob.Result
		if err := json.Unmarshal(j.Output(), &res); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %s %s, $%.4f, saved as %s\n", res.Key, res.Generation.Feature, res.Generation.Status, res.Generation.BalanceUsed, res.Path)
	}
	b, _, err := store.Budget(ctx, river.QueueDefault)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "budget: $%.2f, spent $%.4f\n", b.Cap, b.Spent)
	return nil
}

// openQueue opens the queue's database: PostgreSQL at DATABASE_URL, or the
// SQLite file path.
func openQueue(path string) (*sql.DB, riverdriver.Driver[*sql.Tx], mediagen.Dialect, error) {
	if dsn := os.Getenv("DATABASE_URL"); dsn != "" {
		db, err := sql.Open("pgx", dsn)
		return db, riverdatabasesql.New(db), mediagen.PostgreSQL, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, 0, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, nil, 0, err
	}
	db.SetMaxOpenConns(1) // River's SQLite driver wants one connection
	return db, riversqlite.New(db), mediagen.SQLite, nil
}
