package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/spf13/cobra"
	_ "modernc.org/sqlite" // the journal's database/sql driver

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/batch"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/journal"
)

// batchLine is one line of a batch file.
type batchLine struct {
	Key     string         `json:"key"`
	Feature string         `json:"feature"`
	Args    map[string]any `json:"args"`
}

// batchCommand is `mediagen batch FILE.jsonl ...`.
func (a *app) batchCommand() *cobra.Command {
	var (
		budget      float64
		fit         bool
		concurrency int
		save        string
		journalPath string
		queueDSN    string
		detach      bool
	)
	cmd := &cobra.Command{
		Use:   "batch FILE.jsonl [--budget USD] [--concurrency N] [--save DIR]",
		Short: "Run a file of generations within a budget; run it again to resume",
		Long: `Runs every line of FILE.jsonl, a JSON object per line:

  {"key": "order-1", "feature": "image/generation", "args": {"prompt": "a kite"}}

Without "key", a hash of the line is its key. Each line is sent with its key
as an idempotency key, recorded in a journal (a SQLite file beside FILE,
FILE.journal.db, or --journal), so running the same command again after a
crash or Ctrl-C resumes: what was sent is waited for, nothing is charged
twice. --budget prices the whole file first and refuses it when it costs
more (exit code 4, nothing charged; --fit-budget runs the lines that fit, in
order); the concurrency adapts to rate limits, up to --concurrency. --save
DIR saves every done output there.

With --queue DSN the lines become jobs of a River queue in that database
(a PostgreSQL URL, or sqlite:PATH), worked by "mediagen worker --queue DSN"
on as many machines as share it; a job per key, so running the same
command again adds none twice. --budget is then the queue's budget, shared
by every worker. The command follows the queue's counts until it is empty
(--detach returns at once); Ctrl-C stops following, not the jobs.`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			queue := cmd.Flags().Changed("queue")
			if err := checkBatchFlags(cmd, queue, budget, concurrency, fit, detach); err != nil {
				return err
			}
			items, err := readBatch(args[0])
			if err != nil {
				return err
			}
			if queue {
				return a.enqueue(cmd.Context(), queueDSN, items, budget, save, !detach)
			}
			if journalPath == "" {
				journalPath = args[0] + ".journal.db"
			}
			db, err := sql.Open("sqlite", "file:"+journalPath+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
			if err != nil {
				return err
			}
			defer db.Close()
			ctx := cmd.Context()
			j, err := journal.Open(ctx, db, mediagen.SQLite)
			if err != nil {
				return fmt.Errorf("journal %s: %w", journalPath, err)
			}
			c, err := a.client(client.WithJournal(j))
			if err != nil {
				return err
			}
			opts := []batch.Option{batch.WithConcurrency(concurrency)}
			if budget > 0 {
				opts = append(opts, batch.WithBudget(budget))
			}
			if fit {
				opts = append(opts, batch.WithFitBudget())
			}
			if save != "" {
				opts = append(opts, batch.WithSaveTo(save))
			}
			line := a.newStatusLine(fmt.Sprintf("0/%d submitted", len(items)))
			opts = append(opts, batch.OnProgress(func(p batch.Progress) {
				line.set(fmt.Sprintf("%d/%d submitted, %d done, %d failed, %s spent, %d in flight at most",
					p.Submitted, len(items), p.Done, p.Failed, usd(p.Spent), p.Concurrency))
			}))
			res, err := batch.Run(ctx, c, items, opts...)
			line.stop()
			if err == nil || errors.Is(err, context.Canceled) { // otherwise nothing was sent
				if perr := a.printBatch(res); perr != nil && err == nil {
					err = perr
				}
			}
			switch {
			case errors.Is(err, context.Canceled):
				return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted; what was sent is recorded in %s: run the same command again to resume", journalPath)}
			case errors.Is(err, batch.ErrOverBudget):
				return &exitError{code: exitBalance, err: err}
			case err != nil:
				return err
			case res.Failed > 0 || res.Skipped > 0:
				return &exitError{code: exitOther, err: fmt.Errorf("%d of %d failed, %d skipped", res.Failed, len(items), res.Skipped)}
			}
			return nil
		}),
	}
	cmd.Flags().Float64Var(&budget, "budget", 0, "the most the whole file may cost, in USD (priced before anything is sent)")
	cmd.Flags().BoolVar(&fit, "fit-budget", false, "run the lines that fit the budget, in order, instead of refusing the file")
	cmd.Flags().IntVar(&concurrency, "concurrency", 8, "the most creates in flight; fewer while the service rate-limits")
	cmd.Flags().StringVar(&save, "save", "", "save the outputs into `DIR` as they are done")
	cmd.Flags().StringVar(&journalPath, "journal", "", "the journal's SQLite file (default FILE.journal.db)")
	cmd.Flags().StringVar(&queueDSN, "queue", "", "add the lines as jobs to the River queue in this database (a PostgreSQL URL, or sqlite:PATH) for mediagen worker, instead of running them here")
	cmd.Flags().BoolVar(&detach, "detach", false, "with --queue, return once the jobs are added instead of following them")
	return cmd
}

// checkBatchFlags refuses the flags batch would otherwise ignore or that
// the run refuses only later: each is a usage error.
func checkBatchFlags(cmd *cobra.Command, queue bool, budget float64, concurrency int, fit, detach bool) error {
	switch {
	case budget < 0 || math.IsNaN(budget) || math.IsInf(budget, 0):
		return usageErrorf("--budget %v: want an amount of USD, 0 or more", budget)
	case queue:
		for _, name := range []string{"concurrency", "journal", "fit-budget"} {
			if cmd.Flags().Changed(name) {
				return usageErrorf("--%s does not apply with --queue: mediagen worker runs the jobs", name)
			}
		}
	case detach:
		return usageErrorf("--detach needs --queue")
	case concurrency < 1:
		return usageErrorf("--concurrency %d: want at least 1", concurrency)
	case fit && budget == 0:
		return usageErrorf("--fit-budget needs --budget")
	}
	return nil
}

// readBatch reads a batch file; a malformed or too long line is a usage
// error naming its number, and nothing is sent.
func readBatch(path string) ([]batch.Item, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	defer f.Close()
	var items []batch.Item
	err = eachLine(bufio.NewReaderSize(f, 64<<10), maxBatchLine, func(n int, line []byte) error {
		text := strings.TrimSpace(string(line))
		if text == "" {
			return nil
		}
		var l batchLine
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return usageErrorf("%s:%d: %v", path, n, err)
		}
		fe, err := feature(l.Feature)
		if err != nil {
			return usageErrorf("%s:%d: %v", path, n, err)
		}
		if l.Key == "" {
			sum := sha256.Sum256([]byte(text))
			l.Key = "line-" + hex.EncodeToString(sum[:12])
		}
		if l.Args == nil {
			l.Args = map[string]any{}
		}
		items = append(items, batch.Item{Key: l.Key, Args: client.RawArgs{FeatureName: fe, Values: l.Args}})
		return nil
	})
	if err != nil {
		var coded *exitError
		if errors.As(err, &coded) { // a line's own error, already named
			return nil, err
		}
		return nil, usageErrorf("%s: %v", path, err) // a line too long, or reading failed
	}
	if len(items) == 0 {
		return nil, usageErrorf("%s: no lines", path)
	}
	return items, nil
}

// maxBatchLine is the longest line a batch file may have, in bytes: one
// call's arguments, a long script included, fit many times over.
const maxBatchLine = 4 << 20

// longLineError is a line over the limit of eachLine.
type longLineError struct {
	line, size, limit int
}

func (e *longLineError) Error() string {
	return fmt.Sprintf("line %d is %d bytes, over the limit of %d bytes", e.line, e.size, e.limit)
}

// eachLine calls fn with each line of br and its number, from 1, without
// its "\n" or "\r\n" (as bufio.ScanLines splits), and stops at the first
// error fn returns. A line over limit bytes is a *longLineError that gives
// its length: it is read to its end to count it, but not kept.
func eachLine(br *bufio.Reader, limit int, fn func(n int, line []byte) error) error {
	var line []byte
	for n := 1; ; n++ {
		line = line[:0]
		size := 0
		var last, beforeLast byte // the line's last two bytes, its end included
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			size += len(chunk)
			if len(line)+len(chunk) <= limit+2 { // room for the content and "\r\n"
				line = append(line, chunk...)
			}
			switch len(chunk) {
			case 0:
			case 1:
				beforeLast, last = last, chunk[0]
			default:
				beforeLast, last = chunk[len(chunk)-2], chunk[len(chunk)-1]
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return err
		}
		if size == 0 { // io.EOF with nothing after the last "\n"
			return nil
		}
		content := size
		if last == '\n' {
			content--
			last = beforeLast
		}
		if content > 0 && last == '\r' {
			content--
		}
		if content > limit {
			return &longLineError{line: n, size: content, limit: limit}
		}
		if ferr := fn(n, line[:content]); ferr != nil {
			return ferr
		}
		if err == io.EOF {
			return nil
		}
	}
}

// printBatch prints how each line ended: a table, or a JSON object per
// line with --json.
func (a *app) printBatch(res batch.Result) error {
	if a.json {
		for _, it := range res.Items {
			out := struct {
				Key        string               `json:"key"`
				Generation *mediagen.Generation `json:"generation,omitempty"`
				Saved      string               `json:"saved,omitempty"`
				Error      string               `json:"error,omitempty"`
			}{Key: it.Key, Generation: it.Generation, Saved: it.SavedPath}
			if it.Err != nil {
				out.Error = it.Err.Error()
			}
			if err := a.writeJSON(out); err != nil {
				return err
			}
		}
		return nil
	}
	t := newTable(a.stdout, "KEY", "GENERATION", "STATUS", "SAVED", "ERROR")
	for _, it := range res.Items {
		id, status := "-", "-"
		if g := it.Generation; g != nil {
			id, status = g.ID, string(g.Status)
		}
		msg := ""
		if it.Err != nil {
			msg = oneLine(it.Err.Error())
		}
		t.row(it.Key, id, status, it.SavedPath, msg)
	}
	if err := t.flush(); err != nil {
		return err
	}
	a.printf("%d done, %d failed, %d skipped; %s spent\n", res.Done, res.Failed, res.Skipped, usd(res.Spent))
	return nil
}
