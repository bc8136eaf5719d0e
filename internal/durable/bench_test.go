package durable_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	_ "modernc.org/sqlite"             // registers "sqlite"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/benchpair"
	"github.com/mediagen/mediagen-go/internal/pgtest"
	"github.com/mediagen/mediagen-go/internal/proctest"
)

// countingJournal counts the calls that reach the journal: each is one
// database round trip for the SQL journal.
type countingJournal struct {
	journal.Journal
	calls atomic.Int64
}

func (c *countingJournal) Claim(ctx context.Context, r journal.Record) (journal.Record, bool, error) {
	c.calls.Add(1)
	return c.Journal.Claim(ctx, r)
}

func (c *countingJournal) Settle(ctx context.Context, key, holder, id string) error {
	c.calls.Add(1)
	return c.Journal.Settle(ctx, key, holder, id)
}

func (c *countingJournal) Renew(ctx context.Context, key, holder string, until time.Time) (bool, error) {
	c.calls.Add(1)
	return c.Journal.Renew(ctx, key, holder, until)
}

// BenchmarkPairJournalCreate is the cost of an idempotency key: a create
// with a key through each journal against a plain create, on the reference
// server command over loopback, sides alternating (internal/benchpair).
// journal-calls/op counts the journal's round trips per keyed create.
func BenchmarkPairJournalCreate(b *testing.B) {
	env := startServer(b, proctest.BuildRefServer(b), "-balance", "1e9")
	base, key := value(env, "MEDIAGEN_BASE_URL"), value(env, "MEDIAGEN_API_KEY")
	ctx := context.Background()

	open := func(b *testing.B, driver, dsn string, d mediagen.Dialect) journal.Journal {
		db, err := sql.Open(driver, dsn)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		j, err := journal.Open(ctx, db, d)
		if err != nil {
			b.Fatal(err)
		}
		return j
	}
	for _, tc := range []struct {
		name string
		j    func(b *testing.B) journal.Journal
	}{
		{"Memory", func(*testing.B) journal.Journal { return journal.NewMemory() }},
		{"SQLite", func(b *testing.B) journal.Journal {
			dsn := "file:" + filepath.Join(b.TempDir(), "j.db") + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)"
			return open(b, "sqlite", dsn, mediagen.SQLite)
		}},
		{"PostgreSQL", func(b *testing.B) journal.Journal { return open(b, "pgx", pgtest.DSN(b), mediagen.PostgreSQL) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cj := &countingJournal{Journal: tc.j(b)}
			keyed, err := client.New(key, client.WithBaseURL(base), client.WithJournal(cj))
			if err != nil {
				b.Fatal(err)
			}
			plain, err := client.New(key, client.WithBaseURL(base))
			if err != nil {
				b.Fatal(err)
			}
			args := client.ImageGenerationArgs{Prompt: "bench"}
			var n atomic.Int64
			res := benchpair.Run(b, [2]benchpair.Side{
				{Name: "journal", Run: func(b *testing.B) {
					if _, err := keyed.CreateGeneration(ctx, args, client.WithIdempotencyKey(fmt.Sprint("k-", n.Add(1)))); err != nil {
						b.Fatal(err)
					}
				}},
				{Name: "plain", Run: func(b *testing.B) {
					if _, err := plain.CreateGeneration(ctx, args); err != nil {
						b.Fatal(err)
					}
				}},
			})
			b.ReportMetric(float64(cj.calls.Load())/float64(n.Load()), "journal-calls/op")
			b.ReportMetric(float64(res.Time[0]-res.Time[1])/float64(res.Ops)/1e3, "added-µs/op")
		})
	}
}
