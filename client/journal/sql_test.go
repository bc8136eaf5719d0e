package journal_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // registers "sqlite", pure Go

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client/journal"
)

func TestOpenRefusesBadInput(t *testing.T) {
	ctx := t.Context()
	_, err := journal.Open(ctx, nil, mediagen.Dialect(7), journal.WithTable("1st"), nil, journal.WithTable(`a"b`))
	require.ErrorIs(t, err, journal.ErrInvalidOption)
	joined, ok := err.(interface{ Unwrap() []error })
	require.True(t, ok, "the errors are joined: %v", err)
	assert.Len(t, joined.Unwrap(), 4, "each is reported: %v", err)
	for _, part := range joined.Unwrap() {
		assert.ErrorIs(t, part, journal.ErrInvalidOption)
	}
	for _, want := range []string{"nil *sql.DB", "Dialect(7)", `WithTable("1st")`, `WithTable("a\"b")`} {
		assert.Contains(t, err.Error(), want)
	}

	db, err := sql.Open("sqlite", sqliteDSN(t))
	require.NoError(t, err)
	defer db.Close()
	for _, name := range []string{"", "a-b", "a b", "été", "x;DROP", strings.Repeat("t", 49)} {
		_, err := journal.Open(ctx, db, mediagen.SQLite, journal.WithTable(name))
		assert.ErrorIs(t, err, journal.ErrInvalidOption, "%q", name)
	}
	_, err = journal.Open(ctx, db, 0)
	assert.ErrorIs(t, err, journal.ErrInvalidOption, "the dialect is required")
}

// TestOpenTables opens journals in the default table, in a table named by
// a reserved word, and again in an existing table: each keeps its own
// records, and opening again keeps them.
func TestOpenTables(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := e.open(t, e.database(t))
			def := e.journal(t, db)
			sel := e.journal(t, db, journal.WithTable("select"))
			long := e.journal(t, db, journal.WithTable(strings.Repeat("T", 48)))
			_, _, err := def.Claim(ctx, held("k", "a", at(time.Minute)))
			require.NoError(t, err)
			for _, j := range []*journal.SQL{sel, long} {
				_, err := j.Get(ctx, "k")
				assert.ErrorIs(t, err, journal.ErrNotFound, "another table")
			}
			var n int
			require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM `+journal.DefaultTable).Scan(&n))
			assert.Equal(t, 1, n)

			again := e.journal(t, db)
			_, err = again.Get(ctx, "k")
			assert.NoError(t, err, "Open keeps an existing table")
		})
	}
}

// TestOpenConcurrently has two processes open a new journal at once, which
// SQLite may answer with SQLITE_BUSY and PostgreSQL with a duplicate in its
// catalog unless Open deals with them.
func TestOpenConcurrently(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			for range 5 {
				dsn := e.database(t)
				dbs := []*sql.DB{e.open(t, dsn), e.open(t, dsn), e.open(t, dsn)}
				js := make([]*journal.SQL, len(dbs))
				errs := make([]error, len(dbs))
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i, db := range dbs {
					wg.Go(func() {
						<-start
						js[i], errs[i] = journal.Open(t.Context(), db, e.dialect)
					})
				}
				close(start)
				wg.Wait()
				require.NoError(t, errors.Join(errs...))
				_, _, err := js[0].Claim(t.Context(), held("k", "a", at(time.Minute)))
				require.NoError(t, err)
				for _, j := range js[1:] {
					_, err := j.Get(t.Context(), "k")
					require.NoError(t, err)
				}
			}
		})
	}
}

// TestOpenRetriesBusySQLite opens a journal while another process holds
// the database's write lock and the connection has no busy timeout, so
// SQLite answers SQLITE_BUSY at once: Open tries again until the lock is
// gone.
func TestOpenRetriesBusySQLite(t *testing.T) {
	ctx := t.Context()
	path := "file:" + filepath.Join(t.TempDir(), "journal.db")
	other := engines[0].open(t, path+"?_pragma=journal_mode(WAL)")
	lock, err := other.Conn(ctx)
	require.NoError(t, err)
	defer lock.Close()
	_, err = lock.ExecContext(ctx, `BEGIN EXCLUSIVE`)
	require.NoError(t, err)
	released := make(chan error, 1)
	time.AfterFunc(150*time.Millisecond, func() {
		_, err := lock.ExecContext(context.Background(), `COMMIT`)
		released <- err
	})

	j, err := journal.Open(ctx, engines[0].open(t, path), mediagen.SQLite)
	require.NoError(t, err)
	require.NoError(t, <-released)
	_, ok, err := j.Claim(ctx, held("k", "a", at(time.Minute)))
	require.NoError(t, err)
	assert.True(t, ok)
}

// TestTwoProcesses races claims and take-overs through two handles on one
// database, as two processes sharing a journal would.
func TestTwoProcesses(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			dsn := e.database(t)
			js := []*journal.SQL{e.journal(t, e.open(t, dsn)), e.journal(t, e.open(t, dsn))}
			on := func(caller int) journal.Journal { return js[caller%2] }
			for round := range 10 {
				key := fmt.Sprintf("k%d", round)
				raceClaim(t, key, 16, on)
				// The winner dies; its hold lapses.
				rec, err := js[1].Get(t.Context(), key)
				require.NoError(t, err)
				raceTake(t, key, 8, on)
				now, err := js[0].Get(t.Context(), key)
				require.NoError(t, err)
				assert.NotEqual(t, rec.Holder, now.Holder)
			}
		})
	}
}

// TestTimes stores times of any precision and zone: they come back in UTC
// at the millisecond, and the zero time stays zero.
func TestTimes(t *testing.T) {
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			j := e.journal(t, e.open(t, e.database(t)))
			in := journal.Record{
				Key:       "k",
				Holder:    "a",
				HeldUntil: time.Date(2031, 5, 6, 7, 8, 9, 123_456_789, zone),
				Started:   time.Date(1969, 12, 31, 23, 59, 59, 999_500_000, time.UTC),
				Created:   time.Now(), // with a monotonic reading
			}
			want := in
			for _, p := range []*time.Time{&want.HeldUntil, &want.Started, &want.Created} {
				*p = p.Truncate(time.Millisecond).UTC()
			}
			got, ok, err := j.Claim(ctx, in)
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, want, got, "Claim returns what it stored")
			assert.Equal(t, time.UTC, got.HeldUntil.Location())
			assert.Equal(t, int64(-1), got.Started.UnixMilli(), "before 1970, rounded down")
			stored, err := j.Get(ctx, "k")
			require.NoError(t, err)
			assert.Equal(t, want, stored)

			ok, err = j.Take(ctx, "k", in, "b", time.Time{}, time.Time{})
			require.NoError(t, err)
			assert.True(t, ok, "prev with its nanoseconds still matches what was stored")
			stored, err = j.Get(ctx, "k")
			require.NoError(t, err)
			assert.True(t, stored.HeldUntil.IsZero())
			assert.True(t, stored.Started.IsZero())
		})
	}
}

// TestUnfinishedByteOrderPostgreSQL lists records of one instant from a
// database whose collation sorts "B" between "a" and "b": they still come
// in byte order, as from SQLite and Memory.
func TestUnfinishedByteOrderPostgreSQL(t *testing.T) {
	ctx := t.Context()
	pg := engines[1]
	dsn := pg.database(t)
	admin := pg.open(t, dsn)
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE icu_en TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en' LOCALE 'C.UTF-8'`); err != nil {
		t.Skipf("this PostgreSQL cannot create a database with an ICU collation: %v", err)
	}
	j := pg.journal(t, pg.open(t, regexp.MustCompile(`dbname=\S+`).ReplaceAllString(dsn, "dbname=icu_en")))
	for _, key := range []string{"b", "B", "a"} {
		r := held(key, "h", time.Time{})
		r.ID = "gen_" + key
		_, _, err := j.Claim(ctx, r)
		require.NoError(t, err)
	}
	got, err := j.Unfinished(ctx)
	require.NoError(t, err)
	var keys []string
	for _, r := range got {
		keys = append(keys, r.Key)
	}
	assert.Equal(t, []string{"B", "a", "b"}, keys)
}

// TestStandardLibraryOnly keeps the promise of the design: the journal
// pulls in nothing but the standard library and this module's own
// standard-library-only root package, whose Dialect carries the helpers
// the SQL stores share; the drivers are the user's.
func TestStandardLibraryOnly(t *testing.T) {
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to list dependencies")
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.ElementsMatch(t, []string{"github.com/mediagen/mediagen-go/client/journal", "github.com/mediagen/mediagen-go"},
		strings.Fields(string(out)))
}

// TestOpenAddsTrace opens, three processes at once, a table an earlier
// version created without the trace column: Open adds it, the old rows
// read back with no trace, and new ones keep theirs.
func TestOpenAddsTrace(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			dsn := e.database(t)
			old := e.open(t, dsn)
			float, flag := "REAL NOT NULL", "INTEGER NOT NULL"
			if e.dialect == mediagen.PostgreSQL {
				float, flag = "DOUBLE PRECISION NOT NULL", "BOOLEAN NOT NULL"
			}
			_, err := old.ExecContext(t.Context(), `CREATE TABLE mediagen_journal (key TEXT PRIMARY KEY, op TEXT NOT NULL,
				feature TEXT NOT NULL, fingerprint TEXT NOT NULL, estimate `+float+`, holder TEXT NOT NULL,
				held_until BIGINT NOT NULL, started BIGINT NOT NULL, id TEXT NOT NULL, finished `+flag+`,
				saved `+flag+`, created BIGINT NOT NULL)`)
			require.NoError(t, err)
			_, err = old.ExecContext(t.Context(), e.dialect.Rebind(`INSERT INTO mediagen_journal VALUES
				('old', 'generation', 'f', 'fp', 0.5, 'a', 0, 0, 'gen_1', ?, ?, 1)`), false, false)
			require.NoError(t, err)

			dbs := []*sql.DB{e.open(t, dsn), e.open(t, dsn), e.open(t, dsn)}
			js := make([]*journal.SQL, len(dbs))
			errs := make([]error, len(dbs))
			var wg sync.WaitGroup
			for i, db := range dbs {
				wg.Go(func() { js[i], errs[i] = journal.Open(t.Context(), db, e.dialect) })
			}
			wg.Wait()
			require.NoError(t, errors.Join(errs...))

			r, err := js[0].Get(t.Context(), "old")
			require.NoError(t, err)
			assert.Equal(t, "gen_1", r.ID)
			assert.Empty(t, r.Trace)
			rec := held("new", "b", at(time.Minute))
			rec.Trace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
			_, _, err = js[1].Claim(t.Context(), rec)
			require.NoError(t, err)
			r, err = js[2].Get(t.Context(), "new")
			require.NoError(t, err)
			assert.Equal(t, rec.Trace, r.Trace)
		})
	}
}
