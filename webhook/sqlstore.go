package webhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults of SQLStore, used when the matching SQLOption is not given.
const (
	// DefaultTable is the table SQLStore keeps its rows in.
	DefaultTable = "webhook_deliveries"

	// DefaultRetention is how long SQLStore remembers a delivery: beyond the
	// service's resend two seconds after a failure, and beyond the 24-hour
	// overlap of a secret rotation, so nothing still in flight is forgotten.
	DefaultRetention = 48 * time.Hour

	// DefaultCleanupBatch is the most rows one statement of Cleanup deletes, so
	// that a large backlog never holds long locks on the table.
	DefaultCleanupBatch = 1000

	// DefaultCleanupInterval is how often SQLStore.Claim starts a Cleanup in
	// the background.
	DefaultCleanupInterval = time.Hour
)

// maxTableName keeps the derived index name within PostgreSQL's 63 bytes.
const maxTableName = 48

// firstCleanupAfter delays the first background Cleanup of a store.
const firstCleanupAfter = time.Minute

// Dialect is the SQL dialect of the database behind an SQLStore.
type Dialect int

// The dialects SQLStore speaks.
const (
	// DialectPostgreSQL is PostgreSQL 9.5 or later (INSERT ... ON CONFLICT),
	// with placeholders $1, $2, ... as pgx and lib/pq expect.
	DialectPostgreSQL Dialect = iota + 1
	// DialectSQLite is SQLite 3.24 or later (INSERT ... ON CONFLICT), with ?
	// placeholders.
	DialectSQLite
)

// String returns the dialect's name.
func (d Dialect) String() string {
	switch d {
	case DialectPostgreSQL:
		return "PostgreSQL"
	case DialectSQLite:
		return "SQLite"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// SQLOption configures NewSQLStore, in the shape of every option of the
// SDK: it returns an error for a value it refuses, and NewSQLStore reports
// all of them.
type SQLOption func(*sqlOptions) error

type sqlOptions struct {
	dialect  Dialect
	table    string
	retain   time.Duration
	batch    int
	interval time.Duration
}

// WithDialect says which database the store talks to. It is required: the
// conflict clause and the placeholders differ, and a database/sql driver
// cannot be asked reliably which server it reaches.
func WithDialect(d Dialect) SQLOption {
	return func(o *sqlOptions) error {
		if d != DialectPostgreSQL && d != DialectSQLite {
			return invalidOption("WithDialect(%v): unknown dialect", d)
		}
		o.dialect = d
		return nil
	}
}

// WithTable sets the table the store keeps its rows in; the default is
// DefaultTable. The name is a plain identifier (letters, digits and
// underscores, not starting with a digit, at most 48 bytes), since it is
// written into the statements, quoted, so case is kept and a reserved word
// works. To use another PostgreSQL schema, set the search_path of the
// connection.
func WithTable(name string) SQLOption {
	return func(o *sqlOptions) error {
		if !validIdentifier(name) {
			return invalidOption("WithTable(%q): want letters, digits and underscores, not starting with a digit, at most %d bytes", name, maxTableName)
		}
		o.table = name
		return nil
	}
}

// WithRetention sets how long a claimed delivery is remembered before
// Cleanup deletes it; d must be positive. The default is DefaultRetention.
// A repeat arriving after that runs the callback again.
func WithRetention(d time.Duration) SQLOption {
	return func(o *sqlOptions) error {
		if d <= 0 {
			return invalidOption("WithRetention(%v): retention must be positive", d)
		}
		o.retain = d
		return nil
	}
}

// WithCleanupBatch sets the most rows one DELETE of Cleanup removes; n must
// be positive. The default is DefaultCleanupBatch.
func WithCleanupBatch(n int) SQLOption {
	return func(o *sqlOptions) error {
		if n < 1 {
			return invalidOption("WithCleanupBatch(%d): batch must be positive", n)
		}
		o.batch = n
		return nil
	}
}

// WithCleanupInterval sets how often Claim starts a Cleanup in the
// background, so the table stays small without a scheduled job. The first
// waits a minute after NewSQLStore (or d, if shorter), so that a program
// which only starts up and stops does not race its own database's Close.
// Zero turns that off, for those who call Cleanup themselves; d must not be
// negative. The default is DefaultCleanupInterval.
func WithCleanupInterval(d time.Duration) SQLOption {
	return func(o *sqlOptions) error {
		if d < 0 {
			return invalidOption("WithCleanupInterval(%v): interval must not be negative", d)
		}
		o.interval = d
		return nil
	}
}

// SQLStore is a Store in a database reached through database/sql, so that
// the replicas of a receiver share what they have taken and a resend landing
// on another replica is still dropped. Any driver works; pick its SQL with
// WithDialect.
//
// It keeps one row per delivery in one table (see CreateTable):
//
//	id          text    primary key: the delivery's dedupe key
//	claimed_at  bigint  unix seconds, by the clock of the replica that claimed it
//
// A callback still running when its replica dies leaves its row behind, so
// the resend is dropped as a repeat: as with any Store, polling stays
// authoritative.
//
// SQLite serves the processes of one host sharing the file. Open it with
// WAL journaling and a busy timeout (modernc.org/sqlite:
// "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)"), so that a writer
// waits for another connection's lock instead of failing; within a context
// deadline, such as Handler's, the store cuts that wait to what the deadline
// leaves, since SQLite's wait ignores cancellation.
type SQLStore struct {
	db       *sql.DB
	dialect  Dialect
	table    string
	retain   time.Duration
	batch    int
	interval time.Duration

	create  []string
	claim   string
	release string
	cleanup string

	nextCleanup atomic.Int64 // unix nanoseconds
}

// NewSQLStore returns a store over db. It does no I/O: call CreateTable
// once at start-up (or create the table with a migration tool). WithDialect
// is required; the error wraps ErrInvalidOption when an option is invalid or
// missing.
func NewSQLStore(db *sql.DB, opts ...SQLOption) (*SQLStore, error) {
	o := &sqlOptions{table: DefaultTable, retain: DefaultRetention, batch: DefaultCleanupBatch, interval: DefaultCleanupInterval}
	var errs []error
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(o); err != nil {
			errs = append(errs, err)
		}
	}
	if db == nil {
		errs = append(errs, invalidOption("NewSQLStore: nil *sql.DB"))
	}
	if o.dialect == 0 && len(errs) == 0 {
		errs = append(errs, invalidOption("NewSQLStore: no dialect; pass WithDialect(DialectPostgreSQL) or WithDialect(DialectSQLite)"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s := &SQLStore{db: db, dialect: o.dialect, table: o.table, retain: o.retain, batch: o.batch, interval: o.interval}
	s.prepare()
	s.nextCleanup.Store(time.Now().Add(min(o.interval, firstCleanupAfter)).UnixNano())
	return s, nil
}

// prepare writes the statements once. The table name was validated and is
// quoted besides, so a reserved word works too.
func (s *SQLStore) prepare() {
	t := `"` + s.table + `"`
	idx := `"` + s.table + `_claimed_at"`
	s.create = []string{
		`CREATE TABLE IF NOT EXISTS ` + t + ` (id TEXT PRIMARY KEY, claimed_at BIGINT NOT NULL)`,
		`CREATE INDEX IF NOT EXISTS ` + idx + ` ON ` + t + ` (claimed_at)`,
	}
	switch s.dialect {
	case DialectPostgreSQL:
		s.claim = `INSERT INTO ` + t + ` (id, claimed_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`
		s.release = `DELETE FROM ` + t + ` WHERE id = $1`
		s.cleanup = `DELETE FROM ` + t + ` WHERE id IN (SELECT id FROM ` + t + ` WHERE claimed_at < $1 LIMIT $2)`
	case DialectSQLite:
		s.claim = `INSERT INTO ` + t + ` (id, claimed_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`
		s.release = `DELETE FROM ` + t + ` WHERE id = ?`
		s.cleanup = `DELETE FROM ` + t + ` WHERE rowid IN (SELECT rowid FROM ` + t + ` WHERE claimed_at < ? LIMIT ?)`
	}
}

// CreateTable creates the store's table and its index on claimed_at when
// they do not exist yet. Replicas may all call it at start-up: on PostgreSQL
// it takes an advisory lock so that concurrent creations do not collide.
func (s *SQLStore) CreateTable(ctx context.Context) error {
	if s.dialect != DialectPostgreSQL {
		// Two replicas creating the table at once can get SQLITE_BUSY
		// whatever the busy timeout: try again shortly.
		var err error
		for attempt := range createAttempts {
			if attempt > 0 {
				select {
				case <-ctx.Done():
					return s.fail(ctx, "create table", ctx.Err())
				case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
				}
			}
			if err = s.createAll(ctx); err == nil || !sqliteBusy(err) {
				break
			}
		}
		if err != nil {
			return s.fail(ctx, "create table", err)
		}
		return nil
	}
	// Two CREATE TABLE IF NOT EXISTS racing can both pass the check and one
	// then fails on the catalog's unique index; the lock, held to commit,
	// orders them.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(ctx, "create table", err)
	}
	defer tx.Rollback() // after Commit it does nothing
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "mediagen webhook "+s.table); err != nil {
		return s.fail(ctx, "create table", err)
	}
	for _, q := range s.create {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return s.fail(ctx, "create table", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.fail(ctx, "create table", err)
	}
	return nil
}

// Claim records id and reports whether this call recorded it, in one INSERT
// that does nothing when the id is already there: of concurrent claims of
// one id, on any replica, exactly one reports true. It returns when ctx
// ends, which Handler sets to its acknowledgement time, with an error and
// the id not recorded, unless its commit was already on the way to the
// server. Every WithCleanupInterval, it also starts a Cleanup in the
// background.
func (s *SQLStore) Claim(ctx context.Context, id string) (bool, error) {
	now := time.Now()
	s.maybeCleanup(ctx, now)
	var n int64
	var err error
	if s.dialect == DialectPostgreSQL {
		n, err = s.claimInTx(ctx, id, now)
	} else {
		n, err = s.exec(ctx, s.claim, id, now.Unix())
	}
	if err != nil {
		return false, s.fail(ctx, "claim", err)
	}
	return n == 1, nil
}

// claimInTx inserts in a transaction that commits only while ctx lasts. A
// driver that gives up at the deadline (pgx closes the connection) leaves
// the statement running on the server: waiting for a lock, it would insert
// after Claim reported failure, and the service's resend would then be
// dropped as a repeat. Uncommitted, the insert is rolled back instead.
func (s *SQLStore) claimInTx(ctx context.Context, id string, now time.Time) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() // after Commit it does nothing
	res, err := tx.ExecContext(ctx, s.claim, id, now.Unix())
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// Release deletes id, so that a later delivery of it is taken again.
func (s *SQLStore) Release(ctx context.Context, id string) error {
	if _, err := s.exec(ctx, s.release, id); err != nil {
		return s.fail(ctx, "release", err)
	}
	return nil
}

// Cleanup deletes the rows claimed longer ago than the retention and
// returns how many it deleted. It deletes at most WithCleanupBatch rows per
// statement, each in its own transaction, and goes on until a statement
// deletes fewer, so it may be stopped through ctx at any point without
// losing what it did. Rows of deliveries still within the retention are
// never touched.
func (s *SQLStore) Cleanup(ctx context.Context) (int64, error) {
	before := time.Now().Add(-s.retain).Unix()
	var total int64
	for {
		n, err := s.exec(ctx, s.cleanup, before, s.batch)
		if err != nil {
			return total, s.fail(ctx, "cleanup", err)
		}
		total += n
		if n < int64(s.batch) {
			return total, nil
		}
	}
}

// exec runs one statement and returns the rows it affected. On SQLite, a
// statement waiting for another connection's lock sits in SQLite's busy
// handler, which a cancelled context does not interrupt; so when ctx has a
// deadline, the connection's busy timeout is cut to what is left of it for
// the statement, and put back after.
func (s *SQLStore) exec(ctx context.Context, q string, args ...any) (int64, error) {
	deadline, ok := ctx.Deadline()
	if s.dialect != DialectSQLite || !ok {
		res, err := s.db.ExecContext(ctx, q, args...)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var prev int64
	if err := conn.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&prev); err != nil {
		return 0, err
	}
	if left := time.Until(deadline).Milliseconds() + 1; prev == 0 || left < prev {
		if _, err := conn.ExecContext(ctx, `PRAGMA busy_timeout = `+strconv.FormatInt(left, 10)); err != nil {
			return 0, err
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA busy_timeout = `+strconv.FormatInt(prev, 10))
	}
	res, err := conn.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// maybeCleanup starts a Cleanup when the interval has passed since the last
// one this store started. It runs apart from the claim, so the delivery is
// not kept waiting, and is cut off at the next interval so runs never pile up.
func (s *SQLStore) maybeCleanup(ctx context.Context, now time.Time) {
	if s.interval <= 0 {
		return
	}
	next := s.nextCleanup.Load()
	if now.UnixNano() < next || !s.nextCleanup.CompareAndSwap(next, now.Add(s.interval).UnixNano()) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.interval)
	go func() {
		defer cancel()
		if _, err := s.Cleanup(ctx); err != nil {
			// Nobody waits for this run; the next one retries.
			slog.WarnContext(ctx, "webhook: background cleanup failed", "table", s.table, "err", err)
		}
	}()
}

// fail wraps a database error; when ctx ended, that is the error, as the
// driver's own words for it vary.
func (s *SQLStore) fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = ctxErr
	}
	return fmt.Errorf("webhook: SQL store %s: %w", op, err)
}

func validIdentifier(name string) bool {
	if name == "" || len(name) > maxTableName {
		return false
	}
	for i, c := range name {
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// createAttempts bounds the tries of a SQLite CREATE that found the
// database busy.
const createAttempts = 10

func (s *SQLStore) createAll(ctx context.Context) error {
	for _, q := range s.create {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// sqliteBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED,
// by the driver's code when it has one (modernc.org/sqlite) and by its
// message otherwise, so that no driver is imported. (client/journal and
// poll hold the same few lines: this package imports only the standard
// library and the models.)
func sqliteBusy(err error) bool {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		if c := coded.Code() & 0xff; c == 5 || c == 6 {
			return true
		}
	}
	msg := err.Error()
	return strings.Contains(msg, "database is locked") || strings.Contains(msg, "SQLITE_BUSY") ||
		strings.Contains(msg, "database table is locked")
}
