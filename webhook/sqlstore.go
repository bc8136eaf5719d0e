package webhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mediagen/mediagen-go"
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

// firstCleanupAfter delays the first background Cleanup of a store.
const firstCleanupAfter = time.Minute

// SQLOption configures OpenSQLStore, in the shape of every option of the
// SDK: it returns an error for a value it refuses, and OpenSQLStore reports
// all of them.
type SQLOption func(*SQLStore) error

// WithTable sets the table the store keeps its rows in; the default is
// DefaultTable. The name is a plain identifier (letters, digits and
// underscores, not starting with a digit, at most 48 bytes), since it is
// written into the statements, quoted, so case is kept and a reserved word
// works. To use another PostgreSQL schema, set the search_path of the
// connection.
func WithTable(name string) SQLOption {
	return func(s *SQLStore) error {
		if err := mediagen.CheckTable(name); err != nil {
			return invalidOption("WithTable(%q): %v", name, err)
		}
		s.table = name
		return nil
	}
}

// WithRetention sets how long a claimed delivery is remembered before
// Cleanup deletes it; d must be positive. The default is DefaultRetention.
// A repeat arriving after that runs the callback again.
func WithRetention(d time.Duration) SQLOption {
	return func(s *SQLStore) error {
		if d <= 0 {
			return invalidOption("WithRetention(%v): retention must be positive", d)
		}
		s.retain = d
		return nil
	}
}

// WithCleanupBatch sets the most rows one DELETE of Cleanup removes; n must
// be positive. The default is DefaultCleanupBatch.
func WithCleanupBatch(n int) SQLOption {
	return func(s *SQLStore) error {
		if n < 1 {
			return invalidOption("WithCleanupBatch(%d): batch must be positive", n)
		}
		s.batch = n
		return nil
	}
}

// WithCleanupInterval sets how often Claim starts a Cleanup in the
// background, so the table stays small without a scheduled job. The first
// waits a minute after OpenSQLStore (or d, if shorter), so that a program
// which only starts up and stops does not race its own database's Close.
// Zero turns that off, for those who call Cleanup themselves; d must not be
// negative. The default is DefaultCleanupInterval.
func WithCleanupInterval(d time.Duration) SQLOption {
	return func(s *SQLStore) error {
		if d < 0 {
			return invalidOption("WithCleanupInterval(%v): interval must not be negative", d)
		}
		s.interval = d
		return nil
	}
}

// SQLStore is a Store in a database reached through database/sql, so that
// the replicas of a receiver share what they have taken and a resend landing
// on another replica is still dropped. Any driver works; the
// [mediagen.Dialect] picks the SQL.
//
// It keeps one row per delivery in one table, and an index on claimed_at:
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
// leaves, since SQLite's wait ignores cancellation. A statement SQLite
// still answers busy is tried again through [mediagen.Dialect.Retry].
type SQLStore struct {
	db       *sql.DB
	dialect  mediagen.Dialect
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

// OpenSQLStore returns a store over db in the table of WithTable, creating
// the table and its index when they do not exist yet (see
// [mediagen.Dialect.CreateTable]), so that every replica may call it at
// start-up. The error wraps ErrInvalidOption, for each invalid argument or
// option, joined, or is the database's.
func OpenSQLStore(ctx context.Context, db *sql.DB, d mediagen.Dialect, opts ...SQLOption) (*SQLStore, error) {
	s := &SQLStore{db: db, dialect: d, table: DefaultTable, retain: DefaultRetention, batch: DefaultCleanupBatch, interval: DefaultCleanupInterval}
	var errs []error
	if db == nil {
		errs = append(errs, invalidOption("OpenSQLStore: nil *sql.DB"))
	}
	if err := d.Check(); err != nil {
		errs = append(errs, invalidOption("OpenSQLStore: %v", err))
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
	s.nextCleanup.Store(time.Now().Add(min(s.interval, firstCleanupAfter)).UnixNano())
	return s, nil
}

// prepare writes the statements once; the table name was validated.
func (s *SQLStore) prepare() {
	t := `"` + s.table + `"`
	idx := `"` + s.table + `_claimed_at"`
	s.create = []string{
		`CREATE TABLE IF NOT EXISTS ` + t + ` (id TEXT PRIMARY KEY, claimed_at BIGINT NOT NULL)`,
		`CREATE INDEX IF NOT EXISTS ` + idx + ` ON ` + t + ` (claimed_at)`,
	}
	s.claim = s.dialect.Rebind(`INSERT INTO ` + t + ` (id, claimed_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`)
	s.release = s.dialect.Rebind(`DELETE FROM ` + t + ` WHERE id = ?`)
	// On SQLite by rowid, the table's own key (id has an index of its own).
	key := "id"
	if s.dialect == mediagen.SQLite {
		key = "rowid"
	}
	s.cleanup = s.dialect.Rebind(`DELETE FROM ` + t + ` WHERE ` + key + ` IN (SELECT ` + key + ` FROM ` + t + ` WHERE claimed_at < ? LIMIT ?)`)
}

// Claim records id and reports whether this call recorded it: of
// concurrent claims of one id, on any replica, exactly one reports true.
// It returns when ctx ends (Handler's acknowledgement time) with an error
// and the id not recorded, unless its commit was already on the way.
// Every WithCleanupInterval it also starts a Cleanup in the background.
func (s *SQLStore) Claim(ctx context.Context, id string) (bool, error) {
	now := time.Now()
	s.maybeCleanup(ctx, now)
	var n int64
	var err error
	if s.dialect == mediagen.PostgreSQL {
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
// statement, each in its own transaction, so it may be stopped through ctx
// at any point without losing what it did.
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

// exec runs one statement, retried while SQLite is busy, and returns the
// rows it affected.
func (s *SQLStore) exec(ctx context.Context, q string, args ...any) (n int64, err error) {
	err = s.dialect.Retry(ctx, func() error {
		n, err = s.execOnce(ctx, q, args...)
		return err
	})
	return n, err
}

// execOnce runs one statement. On SQLite, a statement waiting for another
// connection's lock sits in SQLite's busy handler, which a cancelled
// context does not interrupt; so when ctx has a deadline, the connection's
// busy timeout is cut to what is left of it for the statement, and put
// back after.
func (s *SQLStore) execOnce(ctx context.Context, q string, args ...any) (int64, error) {
	deadline, ok := ctx.Deadline()
	if s.dialect != mediagen.SQLite || !ok {
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

// maybeCleanup starts a Cleanup, apart from the claim, when the interval
// has passed since the last one; it is cut off at the next interval so runs
// never pile up.
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

// fail wraps a database error; when ctx ended, that is the error, as
// drivers word it variously.
func (s *SQLStore) fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = ctxErr
	}
	return fmt.Errorf("webhook: SQL store %s: %w", op, err)
}
