package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os/signal"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the queue's PostgreSQL driver
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/spf13/cobra"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/batch"
	"github.com/mediagen/mediagen-go/client"
	riverjob "github.com/mediagen/mediagen-go/river"
)

// queue is a River queue of generations in a database: River's tables and
// the store's, migrated when missing.
type queue struct {
	db     *sql.DB
	driver riverdriver.Driver[*sql.Tx]
	store  *riverjob.Store
}

// openQueue opens the queue at dsn: a PostgreSQL URL or key=value DSN, or
// sqlite:PATH for a file on this machine.
func openQueue(ctx context.Context, dsn string) (*queue, error) {
	q := &queue{}
	var err error
	dialect := mediagen.PostgreSQL
	if dsn == "" || dsn == "sqlite:" { // an unset variable: not a queue in a temporary database
		return nil, usageErrorf("--queue: want a PostgreSQL URL or sqlite:PATH")
	}
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		dialect = mediagen.SQLite
		q.db, err = sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
		if err == nil {
			q.db.SetMaxOpenConns(1) // River's SQLite driver wants one connection per process
			q.driver = riversqlite.New(q.db)
		}
	} else {
		q.db, err = sql.Open("pgx", dsn)
		q.driver = riverdatabasesql.New(q.db)
	}
	if err != nil {
		return nil, usageErrorf("--queue: %v", err)
	}
	m, err := rivermigrate.New(q.driver, nil)
	if err == nil {
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	}
	if err == nil {
		q.store, err = riverjob.Open(ctx, q.db, dialect)
	}
	if err != nil {
		q.db.Close()
		return nil, fmt.Errorf("queue: %w", err)
	}
	return q, nil
}

// progress describes the queue's counts on one line, or why they could not
// be read.
func (q *queue) progress(ctx context.Context) (riverjob.Progress, string, error) {
	p, err := q.store.Progress(ctx, river.QueueDefault)
	if err != nil {
		return p, "progress: " + err.Error(), err
	}
	return p, fmt.Sprintf("%d queued, %d rendering, %d done, %d failed", p.Queued, p.Rendering, p.Done, p.Failed), nil
}

// enqueue adds the items to the queue as jobs, unique by key, sets the
// queue's budget when one is given, and follows the queue until it is
// empty or the command is interrupted (the jobs stay).
func (a *app) enqueue(ctx context.Context, dsn string, items []batch.Item, budget float64, save string, follow bool) error {
	q, err := openQueue(ctx, dsn)
	if err != nil {
		return err
	}
	defer q.db.Close()
	params := make([]river.InsertManyParams, len(items))
	for i, it := range items {
		ja, err := riverjob.NewArgs(it.Key, it.Args)
		if err != nil {
			return usageErrorf("%s: %v", it.Key, err)
		}
		ja.SaveTo = save
		params[i] = river.InsertManyParams{Args: ja}
	}
	if budget > 0 { // once every line is known good
		if err := q.store.SetBudget(ctx, river.QueueDefault, budget); err != nil {
			return err
		}
	}
	rc, err := river.NewClient(q.driver, &river.Config{})
	if err != nil {
		return err
	}
	res, err := rc.InsertMany(ctx, params)
	if err != nil {
		return err
	}
	added := 0
	for _, r := range res {
		if !r.UniqueSkippedAsDuplicate {
			added++
		}
	}
	out := queueOut{Added: added, AlreadyQueued: len(items) - added}
	if !follow {
		return a.printQueue(out, "")
	}
	if !a.json {
		a.printf("%d jobs added, %d already queued\n", added, len(items)-added)
	}
	line := a.newStatusLine("")
	defer line.stop()
	interrupted := &exitError{code: exitInterrupted, err: errors.New("interrupted; the jobs stay queued for the workers")}
	for {
		p, text, err := q.progress(ctx)
		switch {
		case ctx.Err() != nil:
			return interrupted
		case err != nil: // not an empty queue: the jobs' state is unknown
			return fmt.Errorf("queue: %w", err)
		}
		line.set(text)
		if p.Queued+p.Rendering == 0 {
			line.stop()
			counts := Counts(p)
			out.Counts = &counts
			if err := a.printQueue(out, text); err != nil {
				return err
			}
			if p.Failed > 0 {
				return &exitError{code: exitOther, err: fmt.Errorf("%d failed: their jobs' errors say why", p.Failed)}
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return interrupted
		case <-time.After(time.Second):
		}
	}
}

// queueOut is what batch --queue prints with --json: one object, the
// queue's counts once it is empty unless --detach.
type queueOut struct {
	Added         int `json:"added"`
	AlreadyQueued int `json:"alreadyQueued"`
	*Counts
}

// Counts are a riverjob.Progress as JSON.
type Counts struct {
	Queued    int `json:"queued"`
	Rendering int `json:"rendering"`
	Done      int `json:"done"`
	Failed    int `json:"failed"`
}

// printQueue prints out as JSON, or text (the counts; the jobs added
// when text is "") for people.
func (a *app) printQueue(out queueOut, text string) error {
	switch {
	case a.json:
		return a.writeJSON(out)
	case text == "":
		text = fmt.Sprintf("%d jobs added, %d already queued", out.Added, out.AlreadyQueued)
	}
	a.printf("%s\n", text)
	return nil
}

// workerCommand is `mediagen worker --queue DSN`.
func (a *app) workerCommand() *cobra.Command {
	var (
		dsn, save   string
		concurrency int
	)
	cmd := &cobra.Command{
		Use:   "worker --queue DSN [--concurrency N] [--save DIR]",
		Short: "Work the generation jobs of a queue (mediagen batch --queue), on any number of machines",
		Long: `Works the jobs that mediagen batch --queue added, up to --concurrency at
once, until interrupted; run it on as many machines as share the database.
Each job is sent once with its key (recorded in the same database), snoozes
while the service renders, and saves its outputs into --save (or the folder
the batch named). A worker killed at any point loses nothing: another one
resumes its jobs, and no key is charged twice.

DSN is a PostgreSQL URL (postgres://user@host/db) or sqlite:PATH for one machine.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM)
			defer stop()
			q, err := openQueue(ctx, dsn)
			if err != nil {
				return err
			}
			defer q.db.Close()
			c, err := a.client(client.WithJournal(q.store.Journal()))
			if err != nil {
				return err
			}
			var opts []riverjob.Option
			if save != "" {
				opts = append(opts, riverjob.WithSaveTo(save))
			}
			w, err := riverjob.NewWorker(c, q.store, opts...)
			if err != nil {
				return usageErrorf("%v", err)
			}
			workers := river.NewWorkers()
			river.AddWorker(workers, w)
			rc, err := river.NewClient(q.driver, &river.Config{
				Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: concurrency}},
				Workers:              workers,
				JobTimeout:           riverjob.DefaultTimeout,
				RescueStuckJobsAfter: riverjob.DefaultTimeout + time.Minute,
				Logger:               slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			})
			if err != nil {
				return usageErrorf("%v", err)
			}
			if err := rc.Start(context.WithoutCancel(ctx)); err != nil {
				return err
			}
			line := a.newStatusLine("working")
			for ctx.Err() == nil {
				_, text, _ := q.progress(ctx)
				line.set(text)
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
			line.stop()
			stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := rc.Stop(stopCtx); err != nil { // jobs still running are cut short; River runs them again
				_ = rc.StopAndCancel(stopCtx)
			}
			p, text, err := q.progress(stopCtx)
			switch {
			case err != nil: // an error's text, not counts, on stdout
				return fmt.Errorf("queue: %w", err)
			case a.json:
				return a.writeJSON(Counts(p))
			}
			a.printf("%s\n", text)
			return nil
		}),
	}
	cmd.Flags().StringVar(&dsn, "queue", "", "the queue's database: a PostgreSQL URL, or sqlite:PATH")
	cmd.Flags().IntVar(&concurrency, "concurrency", 8, "the most jobs worked at once (renders in flight are not counted)")
	cmd.Flags().StringVar(&save, "save", "", "save outputs into `DIR` when the batch named no folder")
	_ = cmd.MarkFlagRequired("queue")
	return cmd
}
