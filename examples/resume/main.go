// Resume: submit a batch of thumbnails with one idempotency key each,
// through a journal in a SQLite file, wait for them and save them. Kill it
// at any point (Ctrl-C, SIGKILL, a crash) and run it again: it picks up what
// it had submitted, waits for it, and submits only what was never sent, so
// nothing is charged twice and nothing is lost.
//
// With MEDIAGEN_API_KEY set it talks to the service (and spends money), or
// to the reference server command:
//
//	go run ./internal/cmd/refserver -addr 127.0.0.1:8080 -render-scale 0.01   # prints the variables to export
//	go run ./examples/resume                                                 # kill it midway, then run it again
//
// With no key it starts an in-process reference server, which a restart
// does not keep, and a journal of its own that goes with it (-journal is
// for a server that outlives the run), so run it against the command to
// see the resume.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/poll"
)

var (
	journalPath = flag.String("journal", "resume-journal.db", "the journal's SQLite file")
	outputDir   = flag.String("out", "resume-output", "where the thumbnails are saved")
)

// hold is how long a key stays held by a run that stopped renewing it (it
// crashed) before the next run takes it over, searching first for what the
// crashed run sent. Short, so a rerun right after a crash resumes at once.
const hold = 5 * time.Second

// orders are the batch: an idempotency key (an order number, say) and what
// to make for it.
var orders = []struct{ key, prompt string }{
	{"order-1001", "Ten minutes to a tidier desk"},
	{"order-1002", "Sourdough for beginners"},
	{"order-1003", "Three houseplants that forgive you"},
	{"order-1004", "A week of packed lunches"},
	{"order-1005", "Fixing a squeaky door"},
}

func main() {
	flag.Parse()
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()

	path := *journalPath
	if os.Getenv("MEDIAGEN_API_KEY") == "" {
		// The in-process server ends with the run: a journal kept after it
		// would name generations the next run's server never had.
		dir, err := os.MkdirTemp("", "resume-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "journal.db")
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	j, err := journal.Open(ctx, db, mediagen.SQLite)
	if err != nil {
		return err
	}

	var c *client.Client
	if os.Getenv("MEDIAGEN_API_KEY") == "" {
		srv, err := clienttest.Start()
		if err != nil {
			return err
		}
		defer srv.Close()
		c = srv.Client(client.WithJournal(j), client.WithJournalHold(hold))
		fmt.Fprintln(out, "no MEDIAGEN_API_KEY: using an in-process reference server (a restart does not keep it)")
	} else if c, err = client.New("", client.WithJournal(j), client.WithJournalHold(hold)); err != nil {
		return err
	}

	// What an earlier run submitted and did not finish: wait for it below.
	for r, err := range c.Unfinished(ctx) {
		if err != nil {
			fmt.Fprintf(out, "cannot resume %s: %v\n", r.Key, err)
			continue
		}
		fmt.Fprintf(out, "resuming %s: %s is %s\n", r.Key, r.Generation.ID, r.Generation.Status)
	}

	// Every order, keyed: a recorded key returns its generation and
	// charges nothing; only orders never sent are sent.
	keyOf := map[string]string{} // generation id -> key
	var ids []string
	for _, o := range orders {
		g, err := c.CreateGeneration(ctx, client.YoutubeThumbnailArgs{Prompt: o.prompt}, client.WithIdempotencyKey(o.key))
		if err != nil {
			return fmt.Errorf("%s: %w", o.key, err)
		}
		keyOf[g.ID] = o.key
		ids = append(ids, g.ID)
		fmt.Fprintf(out, "submitted %s: %s\n", o.key, g.ID)
	}

	results, err := poll.Generations(ctx, c, ids)
	if err != nil && !errors.As(err, new(*poll.FailedError)) {
		return err
	}
	for _, r := range results {
		g := r.Generation
		if g == nil || g.Status != mediagen.GenerationStatusDone {
			fmt.Fprintf(out, "%s: %v\n", keyOf[r.ID], r.Err) // refunded: safe to send again with a new key
			continue
		}
		// With the key, the journal records that the output is saved.
		saved, err := c.SaveOutput(ctx, g, *outputDir, client.WithIdempotencyKey(keyOf[g.ID]))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "saved %s: %s\n", keyOf[g.ID], saved.Path)
	}
	return nil
}
