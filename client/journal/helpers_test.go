package journal_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // registers "sqlite", pure Go

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/pgtest" // also registers "pgx"
)

// TestMain stops the PostgreSQL server the tests may have started.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := pgtest.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the test PostgreSQL server:", err)
	}
	os.Exit(code)
}

// implementation is a Journal the conformance suite runs against.
type implementation struct {
	name string
	// open returns a new, empty journal.
	open func(t *testing.T) journal.Journal
}

func implementations() []implementation {
	out := []implementation{{name: "Memory", open: func(*testing.T) journal.Journal { return journal.NewMemory() }}}
	for _, e := range engines {
		out = append(out, implementation{name: e.name, open: func(t *testing.T) journal.Journal {
			return e.journal(t, e.open(t, e.database(t)))
		}})
	}
	return out
}

// t0 is the time the records of the suite are about. It is in UTC and at
// the millisecond, as SQL stores times, so every journal returns records
// equal to what it was given; the journals read no clock.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 678_000_000, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// held is a record of key held by holder until until, created at t0.
func held(key, holder string, until time.Time) journal.Record {
	return journal.Record{
		Key: key, Op: "generation", Feature: "image/generation", Fingerprint: "fp-" + key,
		Estimate: 0.04, Holder: holder, HeldUntil: until, Started: t0, Created: t0,
	}
}

// engine is a database the SQL journal is tested on: a real server or file,
// never a mock.
type engine struct {
	name    string
	dialect mediagen.Dialect
	driver  string
	// database returns the DSN of a new, empty database; every *sql.DB opened
	// on it sees the same rows, as the processes sharing a journal would.
	database func(testing.TB) string
}

var engines = []engine{
	{name: "SQLite", dialect: mediagen.SQLite, driver: "sqlite", database: sqliteDSN},
	{name: "PostgreSQL", dialect: mediagen.PostgreSQL, driver: "pgx", database: pgtest.DSN},
}

// sqliteDSN is a database file of its own, in WAL mode with a busy
// timeout, as the journal's documentation asks.
func sqliteDSN(tb testing.TB) string {
	return "file:" + filepath.Join(tb.TempDir(), "journal.db") + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)"
}

// open opens a handle of its own on dsn: another "process".
func (e engine) open(tb testing.TB, dsn string) *sql.DB {
	tb.Helper()
	db, err := sql.Open(e.driver, dsn)
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	db.SetMaxIdleConns(16) // a new PostgreSQL connection is a new server process
	return db
}

func (e engine) journal(tb testing.TB, db *sql.DB, opts ...journal.Option) *journal.SQL {
	tb.Helper()
	j, err := journal.Open(context.Background(), db, e.dialect, opts...)
	require.NoError(tb, err)
	return j
}

// raceTake has callers that each read key take it over at once, through
// the journal of each, and checks that exactly one did.
func raceTake(t *testing.T, key string, callers int, on func(caller int) journal.Journal) {
	t.Helper()
	ctx := t.Context()
	start := make(chan struct{})
	var won atomic.Int32
	winner := make([]bool, callers)
	var wg sync.WaitGroup
	for i := range callers {
		// Each found the lapsed hold before the race; their holds differ.
		prev, err := on(i).Get(ctx, key)
		require.NoError(t, err)
		wg.Go(func() {
			<-start
			ok, err := on(i).Take(ctx, key, prev, fmt.Sprintf("taker-%d", i), at(time.Minute+time.Duration(i)*time.Millisecond), at(2*time.Second))
			if assert.NoError(t, err) && ok {
				won.Add(1)
				winner[i] = true
			}
		})
	}
	close(start)
	wg.Wait()
	require.EqualValues(t, 1, won.Load(), "exactly one caller takes %s", key)
	got, err := on(0).Get(ctx, key)
	require.NoError(t, err)
	for i, w := range winner {
		if w {
			assert.Equal(t, fmt.Sprintf("taker-%d", i), got.Holder)
		}
	}
}

// claimAll claims n new records, a few at a time.
func claimAll(t *testing.T, j journal.Journal, n int, rec func(i int) journal.Record) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				_, ok, err := j.Claim(t.Context(), rec(i))
				if !assert.NoError(t, err) || !assert.True(t, ok) {
					return
				}
			}
		})
	}
	wg.Wait()
}

// raceClaim has callers claim key at once, through the journal of each.
func raceClaim(t *testing.T, key string, callers int, on func(caller int) journal.Journal) {
	t.Helper()
	start := make(chan struct{})
	got := make([]journal.Record, callers)
	won := make([]bool, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			<-start
			got[i], won[i], errs[i] = on(i).Claim(t.Context(), held(key, fmt.Sprintf("caller-%d", i), at(time.Minute)))
		})
	}
	close(start)
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	winners := 0
	for i := range callers {
		if won[i] {
			winners++
			assert.Equal(t, fmt.Sprintf("caller-%d", i), got[i].Holder)
		}
	}
	require.Equal(t, 1, winners, "exactly one caller claims %s", key)
	for i := range callers {
		assert.Equal(t, got[0], got[i], "caller %d sees the one stored record", i)
	}
	stored, err := on(0).Get(t.Context(), key)
	require.NoError(t, err)
	assert.Equal(t, got[0], stored)
}
