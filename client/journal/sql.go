package journal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mediagen/mediagen-go"
)

// DefaultTable is the table an SQL journal uses unless WithTable names another.
const DefaultTable = "mediagen_journal"

// ErrInvalidOption is wrapped by Open's error for an invalid argument or option.
var ErrInvalidOption = errors.New("journal: invalid option")

// Option configures Open; Open reports every value an option refuses.
type Option func(*SQL) error

// WithTable sets the journal's table (default DefaultTable): a plain
// identifier of at most 48 bytes, quoted in the statements, so case is kept
// and a reserved word works. For another PostgreSQL schema, set the
// connection's search_path.
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

const (
	// cleanupBatch caps the rows one DELETE of Cleanup removes, so a large
	// backlog never holds long locks on the table.
	cleanupBatch = 1000
	// claimAttempts bounds Claim's INSERTs while the row it finds is
	// released each time before it is read.
	claimAttempts = 100
)

// SQL is a Journal in a database/sql table, shared by every process that
// opens the same database and table: a key charges once across all of
// them. Any driver works; the [mediagen.Dialect] picks the SQL. One row per
// key:
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
// and an index on created (Cleanup, the order of Unfinished). Times are
// integer milliseconds, so no time zone setting takes part: they come back
// in UTC at the millisecond, Claim's included, and the zero time as 0.
//
// SQLite serves the processes of one host sharing the file: open it with
// WAL and a busy timeout (modernc.org/sqlite:
// "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)"), so a writer
// waits for another's lock. That wait ignores contexts; a statement still
// answered busy is tried again through [mediagen.Dialect.Retry].
type SQL struct {
	db      *sql.DB
	dialect mediagen.Dialect
	table   string

	create                                         []string
	claim, get, take, renew, settle, release, mark string
	unfinished, cleanup                            string
}

var _ Journal = (*SQL)(nil)

// columns are the table's columns in the order of Record's fields.
const columns = `key, op, feature, fingerprint, estimate, holder, held_until, started, id, finished, saved, created, trace`

// Open returns a journal over db in the table of WithTable, creating the
// table and its index when missing ([mediagen.Dialect.CreateTable]), so
// every process may call it at start-up; an older table gains the trace
// column. The error joins one wrapping ErrInvalidOption per invalid
// argument or option, or is the database's.
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
		if opt != nil {
			errs = append(errs, opt(s))
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
	// Keys of one instant come in byte order, SQLite's BINARY, whatever
	// PostgreSQL's collation.
	text, float, flag, byteOrder := "TEXT NOT NULL", "REAL NOT NULL", "INTEGER NOT NULL", ""
	if s.dialect == mediagen.PostgreSQL {
		float, flag, byteOrder = "DOUBLE PRECISION NOT NULL", "BOOLEAN NOT NULL", ` COLLATE "C"`
	}
	s.create = []string{
		`CREATE TABLE IF NOT EXISTS ` + t + ` (key TEXT PRIMARY KEY, op ` + text + `, feature ` + text +
			`, fingerprint ` + text + `, estimate ` + float + `, holder ` + text + `, held_until BIGINT NOT NULL` +
			`, started BIGINT NOT NULL, id ` + text + `, finished ` + flag + `, saved ` + flag +
			`, created BIGINT NOT NULL, trace TEXT NOT NULL DEFAULT '')`,
		`CREATE INDEX IF NOT EXISTS "` + s.table + `_created" ON ` + t + ` (created)`,
	}
	q := s.dialect.Rebind
	s.claim = q(`INSERT INTO ` + t + ` (` + columns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`)
	s.get = q(`SELECT ` + columns + ` FROM ` + t + ` WHERE key = ?`)
	s.take = q(`UPDATE ` + t + ` SET holder = ?, held_until = ?, started = ? WHERE key = ? AND id = '' AND holder = ? AND held_until = ?`)
	s.renew = q(`UPDATE ` + t + ` SET held_until = ? WHERE key = ? AND holder = ? AND id = ''`)
	s.settle = q(`UPDATE ` + t + ` SET id = ?, held_until = 0 WHERE key = ? AND holder = ? AND id = ''`)
	s.release = q(`DELETE FROM ` + t + ` WHERE key = ? AND holder = ? AND id = ''`)
	// OR keeps a flag that is set. Flags are booleans in PostgreSQL, 0/1 in
	// SQLite: OR, NOT and AND read both.
	s.mark = q(`UPDATE ` + t + ` SET finished = (finished OR ?), saved = (saved OR ?) WHERE key = ?`)
	s.unfinished = `SELECT ` + columns + ` FROM ` + t + ` WHERE id <> '' AND NOT (finished AND saved) ORDER BY created, key` + byteOrder
	s.cleanup = q(`DELETE FROM ` + t + ` WHERE key IN (SELECT key FROM ` + t + ` WHERE created < ? LIMIT ?)`)
}

// Claim implements [Journal]: an INSERT that does nothing when the key has
// a row, then a SELECT of that row; should the row be released between the
// two, the INSERT is tried again.
func (s *SQL) Claim(ctx context.Context, r Record) (Record, bool, error) {
	r = stored(r)
	for range claimAttempts {
		n, err := s.exec(ctx, "claim", s.claim, r.Key, r.Op, r.Feature, r.Fingerprint, r.Estimate, r.Holder,
			millis(r.HeldUntil), millis(r.Started), r.ID, r.Finished, r.Saved, millis(r.Created), r.Trace)
		if err != nil {
			return Record{}, false, err
		}
		if n == 1 {
			return r, true, nil
		}
		have, err := s.Get(ctx, r.Key)
		if !errors.Is(err, ErrNotFound) {
			return have, false, err
		}
	}
	err := errors.New("the key was released and claimed again too often")
	return Record{}, false, s.fail(ctx, "claim", err)
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

// Take implements [Journal]; prev.HeldUntil is compared at the millisecond.
func (s *SQL) Take(ctx context.Context, key string, prev Record, holder string, until, started time.Time) (bool, error) {
	n, err := s.exec(ctx, "take", s.take, holder, millis(until), millis(started),
		key, prev.Holder, millis(prev.HeldUntil))
	return n == 1, err
}

// Renew implements [Journal].
func (s *SQL) Renew(ctx context.Context, key, holder string, until time.Time) (bool, error) {
	n, err := s.exec(ctx, "renew", s.renew, millis(until), key, holder)
	return n == 1, err
}

// Settle implements [Journal].
func (s *SQL) Settle(ctx context.Context, key, holder, id string) error {
	return s.execOne(ctx, "settle", ErrNotHeld, s.settle, id, key, holder)
}

// Release implements [Journal].
func (s *SQL) Release(ctx context.Context, key, holder string) error {
	_, err := s.exec(ctx, "release", s.release, key, holder)
	return err
}

// Mark implements [Journal].
func (s *SQL) Mark(ctx context.Context, key string, finished, saved bool) error {
	return s.execOne(ctx, "mark", ErrNotFound, s.mark, finished, saved, key)
}

// Unfinished implements [Journal]; records of one millisecond come in the
// byte order of their keys.
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

// Cleanup implements [Journal]. Each DELETE of at most cleanupBatch rows is
// its own transaction, so ctx may stop it anywhere without losing what it
// did. Created before before is at the nanosecond, as Memory has it.
func (s *SQL) Cleanup(ctx context.Context, before time.Time) (int, error) {
	limit := before.UnixMilli()
	if before.Nanosecond()%int(time.Millisecond) != 0 {
		limit++ // a record of the millisecond before was created before before
	}
	total := 0
	for {
		n, err := s.exec(ctx, "cleanup", s.cleanup, limit, cleanupBatch)
		total += int(n)
		if err != nil || n < cleanupBatch {
			return total, err
		}
	}
}

// exec runs one statement of op, retried while SQLite is busy, and returns
// the rows it affected.
func (s *SQL) exec(ctx context.Context, op, q string, args ...any) (n int64, err error) {
	err = s.dialect.Retry(ctx, func() error {
		res, err := s.db.ExecContext(ctx, q, args...)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return 0, s.fail(ctx, op, err)
	}
	return n, nil
}

// execOne is exec for a statement that must affect a row, or fail with none.
func (s *SQL) execOne(ctx context.Context, op string, none error, q string, args ...any) error {
	n, err := s.exec(ctx, op, q, args...)
	if err == nil && n == 0 {
		return none
	}
	return err
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

// fail wraps a database error naming op; when ctx ended, that is the error,
// as drivers word it variously.
func (s *SQL) fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = ctxErr
	}
	return fmt.Errorf("journal: SQL %s: %w", op, err)
}
