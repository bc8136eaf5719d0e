package journal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mediagen/mediagen-go"
)

// DefaultTable is the table an SQL journal keeps its records in unless
// WithTable names another.
const DefaultTable = "mediagen_journal"

// ErrInvalidOption is wrapped by the error of Open when an argument or an
// option is invalid.
var ErrInvalidOption = errors.New("journal: invalid option")

// Option configures Open, in the shape of every option of the SDK: it
// returns an error for a value it refuses, and Open reports all of them.
type Option func(*SQL) error

// WithTable sets the table the journal keeps its records in; the default is
// DefaultTable. The name is a plain identifier (letters, digits and
// underscores, not starting with a digit, at most 48 bytes), since it is
// written into the statements, quoted, so case is kept and a reserved word
// works. To use another PostgreSQL schema, set the search_path of the
// connection.
func WithTable(name string) Option {
	return func(s *SQL) error {
		if err := mediagen.CheckTable(name); err != nil {
			return invalidOption("WithTable(%q): %v", name, err)
		}
		s.table = name
		return nil
	}
}

func invalidOption(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
}

// cleanupBatch is the most rows one DELETE of Cleanup removes, so that a
// large backlog never holds long locks on the table.
const cleanupBatch = 1000

// claimAttempts bounds Claim's INSERTs when the row it found is released
// each time before it reads it.
const claimAttempts = 100

// SQL is a Journal in a database reached through database/sql, shared by
// every process that opens the same database and table: a key charges once
// across all of them. Any driver works; the [mediagen.Dialect] picks the
// SQL.
//
// It keeps one row per key in one table:
//
//	key                            text primary key (keys of the client are at most 255 bytes)
//	op, feature, fingerprint       text
//	estimate                       double precision (PostgreSQL), real (SQLite)
//	holder                         text
//	held_until, started            bigint, unix milliseconds; 0 for none
//	id                             text; '' until settled
//	finished, saved                boolean (PostgreSQL), 0 or 1 (SQLite)
//	created                        bigint, unix milliseconds
//	trace                          text; a W3C traceparent, '' for none
//
// and an index on created, which serves Cleanup and the order of
// Unfinished.
//
// Times are stored as integer milliseconds since the Unix epoch, so no
// time zone setting takes part; they come back in UTC, truncated to the
// millisecond, Claim's included. The zero time (and the epoch) is stored
// as 0 and read back as the zero time.
//
// SQLite serves the processes of one host sharing the file. Open it with WAL
// journaling and a busy timeout (modernc.org/sqlite:
// "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)"), so that a
// writer waits for another connection's lock instead of failing. SQLite's
// wait does not end when a context is cancelled. A statement SQLite still
// answers busy is tried again through [mediagen.Dialect.Retry].
type SQL struct {
	db      *sql.DB
	dialect mediagen.Dialect
	table   string

	create                                         []string
	claim, get, take, renew, settle, release, mark string
	unfinished, cleanup                            string
}

var _ Journal = (*SQL)(nil)

// columns are the table's columns in the order of Record's fields, as
// every statement writes and reads them.
const columns = `key, op, feature, fingerprint, estimate, holder, held_until, started, id, finished, saved, created, trace`

// Open returns a journal over db in the table of WithTable, creating the
// table and its index when they do not exist yet (see
// [mediagen.Dialect.CreateTable]), so that every process may call it at
// start-up. A table an earlier version created gains the trace column. The error wraps ErrInvalidOption, for each invalid argument or
// option, joined, or is the database's.
func Open(ctx context.Context, db *sql.DB, d mediagen.Dialect, opts ...Option) (*SQL, error) {
	s := &SQL{db: db, dialect: d, table: DefaultTable}
	var errs []error
	if db == nil {
		errs = append(errs, invalidOption("Open: nil *sql.DB"))
	}
	if err := d.Check(); err != nil {
		errs = append(errs, invalidOption("Open: %v", err))
	}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(s); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s.prepare()
	if err := d.CreateTable(ctx, db, s.create...); err != nil {
		return nil, s.fail(ctx, "create table", err)
	}
	if err := d.AddColumn(ctx, db, s.table, "trace", "TEXT NOT NULL DEFAULT ''"); err != nil {
		return nil, s.fail(ctx, "add the trace column", err)
	}
	return s, nil
}

// prepare writes the statements once; the table name was validated.
func (s *SQL) prepare() {
	t := `"` + s.table + `"`
	// Keys of one instant come in byte order, as SQLite's BINARY has them,
	// not in the order of PostgreSQL's collation.
	byteOrder := ""
	if s.dialect == mediagen.PostgreSQL {
		byteOrder = ` COLLATE "C"`
	}
	text, float, flag := "TEXT NOT NULL", "REAL NOT NULL", "INTEGER NOT NULL"
	if s.dialect == mediagen.PostgreSQL {
		float, flag = "DOUBLE PRECISION NOT NULL", "BOOLEAN NOT NULL"
	}
	s.create = []string{
		`CREATE TABLE IF NOT EXISTS ` + t + ` (key TEXT PRIMARY KEY, op ` + text + `, feature ` + text +
			`, fingerprint ` + text + `, estimate ` + float + `, holder ` + text + `, held_until BIGINT NOT NULL` +
			`, started BIGINT NOT NULL, id ` + text + `, finished ` + flag + `, saved ` + flag +
			`, created BIGINT NOT NULL, trace TEXT NOT NULL DEFAULT '')`,
		`CREATE INDEX IF NOT EXISTS "` + s.table + `_created" ON ` + t + ` (created)`,
	}
	s.claim = s.dialect.Rebind(`INSERT INTO ` + t + ` (` + columns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`)
	s.get = s.dialect.Rebind(`SELECT ` + columns + ` FROM ` + t + ` WHERE key = ?`)
	s.take = s.dialect.Rebind(`UPDATE ` + t + ` SET holder = ?, held_until = ?, started = ? WHERE key = ? AND id = '' AND holder = ? AND held_until = ?`)
	s.renew = s.dialect.Rebind(`UPDATE ` + t + ` SET held_until = ? WHERE key = ? AND holder = ? AND id = ''`)
	s.settle = s.dialect.Rebind(`UPDATE ` + t + ` SET id = ?, held_until = 0 WHERE key = ? AND holder = ? AND id = ''`)
	s.release = s.dialect.Rebind(`DELETE FROM ` + t + ` WHERE key = ? AND holder = ? AND id = ''`)
	// OR keeps a flag that is set: Mark only ever sets them.
	s.mark = s.dialect.Rebind(`UPDATE ` + t + ` SET finished = (finished OR ?), saved = (saved OR ?) WHERE key = ?`)
	// finished and saved are booleans in PostgreSQL and 0/1 in SQLite; NOT
	// and AND read both.
	s.unfinished = `SELECT ` + columns + ` FROM ` + t + ` WHERE id <> '' AND NOT (finished AND saved) ORDER BY created, key` + byteOrder
	s.cleanup = s.dialect.Rebind(`DELETE FROM ` + t + ` WHERE key IN (SELECT key FROM ` + t + ` WHERE created < ? LIMIT ?)`)
}

// Claim implements [Journal]: an INSERT that does nothing when the key has
// a row, then, if it did nothing, a SELECT of that row. Should the row be
// released between the two, the INSERT is tried again.
func (s *SQL) Claim(ctx context.Context, r Record) (Record, bool, error) {
	r = stored(r)
	for attempt := 0; ; attempt++ {
		if attempt == claimAttempts {
			return Record{}, false, s.fail(ctx, "claim", errors.New("the key was released and claimed again too often"))
		}
		n, err := s.exec(ctx, s.claim, r.Key, r.Op, r.Feature, r.Fingerprint, r.Estimate, r.Holder,
			millis(r.HeldUntil), millis(r.Started), r.ID, r.Finished, r.Saved, millis(r.Created), r.Trace)
		if err != nil {
			return Record{}, false, s.fail(ctx, "claim", err)
		}
		if n == 1 {
			return r, true, nil
		}
		have, err := s.Get(ctx, r.Key)
		if !errors.Is(err, ErrNotFound) {
			return have, false, err
		}
	}
}

// Get implements [Journal].
func (s *SQL) Get(ctx context.Context, key string) (Record, error) {
	var r Record
	err := s.dialect.Retry(ctx, func() (err error) {
		r, err = scan(s.db.QueryRowContext(ctx, s.get, key))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, ErrNotFound
	}
	if err != nil {
		return Record{}, s.fail(ctx, "get", err)
	}
	return r, nil
}

// Take implements [Journal]. prev.HeldUntil is compared at the
// millisecond, as stored.
func (s *SQL) Take(ctx context.Context, key string, prev Record, holder string, until, started time.Time) (bool, error) {
	n, err := s.exec(ctx, s.take, holder, millis(until), millis(started), key, prev.Holder, millis(prev.HeldUntil))
	if err != nil {
		return false, s.fail(ctx, "take", err)
	}
	return n == 1, nil
}

// Renew implements [Journal].
func (s *SQL) Renew(ctx context.Context, key, holder string, until time.Time) (bool, error) {
	n, err := s.exec(ctx, s.renew, millis(until), key, holder)
	if err != nil {
		return false, s.fail(ctx, "renew", err)
	}
	return n == 1, nil
}

// Settle implements [Journal].
func (s *SQL) Settle(ctx context.Context, key, holder, id string) error {
	n, err := s.exec(ctx, s.settle, id, key, holder)
	if err != nil {
		return s.fail(ctx, "settle", err)
	}
	if n == 0 {
		return ErrNotHeld
	}
	return nil
}

// Release implements [Journal].
func (s *SQL) Release(ctx context.Context, key, holder string) error {
	if _, err := s.exec(ctx, s.release, key, holder); err != nil {
		return s.fail(ctx, "release", err)
	}
	return nil
}

// Mark implements [Journal].
func (s *SQL) Mark(ctx context.Context, key string, finished, saved bool) error {
	n, err := s.exec(ctx, s.mark, finished, saved, key)
	if err != nil {
		return s.fail(ctx, "mark", err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// Unfinished implements [Journal]. Records created in the same millisecond
// come in the byte order of their keys.
func (s *SQL) Unfinished(ctx context.Context) ([]Record, error) {
	var out []Record
	err := s.dialect.Retry(ctx, func() error {
		out = nil
		rows, err := s.db.QueryContext(ctx, s.unfinished)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scan(rows)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.fail(ctx, "unfinished", err)
	}
	return out, nil
}

// Cleanup implements [Journal]. It deletes at most 1,000 rows per
// statement, each its own transaction, so it may be stopped through ctx at
// any point without losing what it did. A record counts as created before
// before when it was at the nanosecond, as Memory has it.
func (s *SQL) Cleanup(ctx context.Context, before time.Time) (int, error) {
	limit := before.UnixMilli()
	if before.Nanosecond()%int(time.Millisecond) != 0 {
		limit++ // a record of the millisecond before was created before before
	}
	total := 0
	for {
		n, err := s.exec(ctx, s.cleanup, limit, cleanupBatch)
		if err != nil {
			return total, s.fail(ctx, "cleanup", err)
		}
		total += int(n)
		if n < cleanupBatch {
			return total, nil
		}
	}
}

// exec runs one statement, retried while SQLite is busy, and returns the
// rows it affected.
func (s *SQL) exec(ctx context.Context, q string, args ...any) (n int64, err error) {
	err = s.dialect.Retry(ctx, func() error {
		res, err := s.db.ExecContext(ctx, q, args...)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	return n, err
}

// scan reads a row of columns.
func scan(row interface{ Scan(...any) error }) (Record, error) {
	var r Record
	var heldUntil, started, created int64
	err := row.Scan(&r.Key, &r.Op, &r.Feature, &r.Fingerprint, &r.Estimate, &r.Holder,
		&heldUntil, &started, &r.ID, &r.Finished, &r.Saved, &created, &r.Trace)
	r.HeldUntil, r.Started, r.Created = fromMillis(heldUntil), fromMillis(started), fromMillis(created)
	return r, err
}

// stored returns r as SQL stores it: times in UTC, at the millisecond.
func stored(r Record) Record {
	r.HeldUntil, r.Started, r.Created = fromMillis(millis(r.HeldUntil)), fromMillis(millis(r.Started)), fromMillis(millis(r.Created))
	return r
}

// millis is t in unix milliseconds, rounded down; 0 for the zero time.
func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMillis is the inverse of millis, in UTC.
func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// fail wraps a database error; when ctx ended, that is the error, as the
// drivers' own words for it vary.
func (s *SQL) fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = ctxErr
	}
	return fmt.Errorf("journal: SQL %s: %w", op, err)
}
