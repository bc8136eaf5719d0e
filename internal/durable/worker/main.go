// Command worker submits one image generation per key through a journal,
// for the durable test: it prints "key id" for every key it was handed a
// generation for, and, with -kill-after-send, kills itself with SIGKILL at
// random right after the service answered a create, before the id is
// recorded in the journal.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	_ "modernc.org/sqlite"             // registers "sqlite"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/journal"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	dialect := flag.String("dialect", "sqlite", "journal database: sqlite or postgres")
	dsn := flag.String("dsn", "", "journal database DSN")
	keys := flag.String("keys", "", "comma-separated keys to submit, in order")
	killAfterSend := flag.Float64("kill-after-send", 0, "probability of a SIGKILL right after a create is answered")
	hold := flag.Duration("hold", 2*time.Second, "journal hold")
	flag.Parse()

	d := mediagen.SQLite
	driver := "sqlite"
	if *dialect == "postgres" {
		d, driver = mediagen.PostgreSQL, "pgx"
	}
	db, err := sql.Open(driver, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	j, err := journal.Open(ctx, db, d)
	if err != nil {
		return err
	}
	kill := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		if err == nil && req.Method == http.MethodPost && req.URL.Path == "/v3/generations" &&
			resp.StatusCode == http.StatusOK && rand.Float64() < *killAfterSend {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL) // the service charged; the journal has no id yet
			time.Sleep(time.Minute)
		}
		return resp, err
	}
	c, err := client.New("", client.WithJournal(j), client.WithJournalHold(*hold),
		client.WithRetryWait(5*time.Millisecond, 50*time.Millisecond), client.WithMaxRetries(8), client.WithMiddleware(kill))
	if err != nil {
		return err
	}
	for _, key := range strings.Split(*keys, ",") {
		for {
			g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "durable " + key}, client.WithIdempotencyKey(key))
			if err == nil {
				fmt.Printf("%s %s\n", key, g.ID)
				break
			}
			var ue *client.UncertainError
			if errors.Is(err, client.ErrIdempotencyMismatch) {
				return err
			}
			// Faults that outlast the retries: the same key again is safe.
			fmt.Fprintf(os.Stderr, "worker: %s: %v (again; uncertain=%t)\n", key, err, errors.As(err, &ue))
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}
