package webhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mediagen/mediagen-go"
)

// Defaults of SQLStore, used when the matching SQLOption is not given.
const (
	// DefaultTable is the table SQLStore keeps its rows in.
	DefaultTable = "webhook_deliveries"
	// DefaultRetention is how long SQLStore remembers a delivery: past any resend or secret rotation.
	DefaultRetention = 48 * time.Hour
	// DefaultCleanupBatch is the most rows one DELETE of Cleanup removes, so locks stay short.
	DefaultCleanupBatch = 1000
	// DefaultCleanupInterval is how often SQLStore.Claim starts a Cleanup in the background.
	DefaultCleanupInterval = time.Hour
)

// firstCleanupAfter delays the first background Cleanup, so that a program
// that only starts and stops does not race its database's Close.
const firstCleanupAfter = time.Minute

// SQLOption configures OpenSQLStore; OpenSQLStore reports every value refused.
type SQLOption func(*SQLStore) error

// WithTable sets the store's table (default DefaultTable): a plain identifier
// ([mediagen.CheckTable]). For another PostgreSQL schema, set the search_path.
func WithTable(name string) SQLOption {
	return func(s *SQLStore) error {
		if err := mediagen.CheckTable(name); err != nil {
			return invalidOption("WithTable(%q): %v", name, err)
		}
		s.table = name
		return nil
	}
}

// WithRetention sets how long a claimed delivery is remembered before Cleanup
// deletes it (default DefaultRetention); a repeat after that runs the callback again.
func WithRetention(d time.Duration) SQLOption {
	return positive("WithRetention", d, func(s *SQLStore) *time.Duration { return &s.retain })
}

// WithCleanupBatch sets the most rows one DELETE of Cleanup removes (default DefaultCleanupBatch).
func WithCleanupBatch(n int) SQLOption {
	return positive("WithCleanupBatch", n, func(s *SQLStore) *int { return &s.batch })
}

// WithCleanupInterval sets how often Claim starts a Cleanup in the background
// (default DefaultCleanupInterval); the first waits a minute, or d if shorter.
// Zero turns it off, for those who call Cleanup themselves.
func WithCleanupInterval(d time.Duration) SQLOption {
	return func(s *SQLStore) error {
		if d < 0 {
			return invalidOption("WithCleanupInterval(%v): interval must not be negative", d)
		}
		s.interval = d
		return nil
	}
}

// SQLStore is a Store in a database/sql database shared by the replicas of a
// receiver, so that a resend landing on another replica is still dropped. Any
// driver works; the [mediagen.Dialect] picks the SQL. Its table has one row
// per delivery, and an index on claimed_at:
//
//	id          text    primary key: the delivery's dedupe key
//	claimed_at  bigint  unix seconds, by the claiming replica's clock
//
// A replica dying mid-callback leaves its row, so the resend is dropped: polling stays authoritative.
//
// With SQLite (processes of one host), open the file with WAL and a busy
// timeout (modernc.org/sqlite: "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)").
// Under a context deadline the store cuts that wait to what the deadline
// leaves, as SQLite's ignores cancellation; a statement still busy is retried
// ([mediagen.Dialect.Retry]).
type SQLStore struct {
	db       *sql.DB
	dialect  mediagen.Dialect
	table    string
	retain   time.Duration
	batch    int
	interval time.Duration

	claim, release, cleanup string

	nextCleanup atomic.Int64 // unix nanoseconds
}

// OpenSQLStore returns a store over db, creating its table and index when
// missing, so every replica may call it at start-up. The error wraps
// ErrInvalidOption for each invalid argument or option, or is the database's.
func OpenSQLStore(ctx context.Context, db *sql.DB, d mediagen.Dialect, opts ...SQLOption) (*SQLStore, error) {
	s := &SQLStore{db: db, dialect: d, table: DefaultTable, retain: DefaultRetention,
		batch: DefaultCleanupBatch, interval: DefaultCleanupInterval}
	var errs []error
	if db == nil {
		errs = append(errs, invalidOption("OpenSQLStore: nil *sql.DB"))
	}
	if err := d.Check(); err != nil {
		errs = append(errs, invalidOption("OpenSQLStore: %v", err))
	}
	if err := errors.Join(append(errs, apply(s, opts)...)...); err != nil {
		return nil, err
	}
	t := `"` + s.table + `"`
	s.claim = d.Rebind(`INSERT INTO ` + t + ` (id, claimed_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`)
	s.release = d.Rebind(`DELETE FROM ` + t + ` WHERE id = ?`)
	// On SQLite by rowid, the table's own key (id has an index of its own).
	key := "id"
	if d == mediagen.SQLite {
		key = "rowid"
	}
	s.cleanup = d.Rebind(`DELETE FROM ` + t + ` WHERE ` + key + ` IN (SELECT ` + key + ` FROM ` + t +
		` WHERE claimed_at < ? LIMIT ?)`)
	err := d.CreateTable(ctx, db,
		`CREATE TABLE IF NOT EXISTS `+t+` (id TEXT PRIMARY KEY, claimed_at BIGINT NOT NULL)`,
		`CREATE INDEX IF NOT EXISTS "`+s.table+`_claimed_at" ON `+t+` (claimed_at)`)
	if err != nil {
		return nil, s.fail(ctx, "create table", err)
	}
	s.nextCleanup.Store(time.Now().Add(min(s.interval, firstCleanupAfter)).UnixNano())
	return s, nil
}

// Claim records id and reports whether this call recorded it: of concurrent
// claims of one id, on any replica, exactly one reports true. When ctx ends it
// fails with id not recorded, unless its commit was on the way. Every
// WithCleanupInterval it also starts a Cleanup in the background.
func (s *SQLStore) Claim(ctx context.Context, id string) (bool, error) {
	now := time.Now()
	s.maybeCleanup(ctx, now)
	exec := s.exec
	if s.dialect == mediagen.PostgreSQL {
		exec = s.execInTx
	}
	n, err := exec(ctx, s.claim, id, now.Unix())
	if err != nil {
		return false, s.fail(ctx, "claim", err)
	}
	return n == 1, nil
}

// execInTx commits only while ctx lasts. A driver that gives up at the
// deadline (pgx closes the connection) leaves the statement running on the
// server, where it could insert after Claim failed and the resend would be
// dropped; uncommitted, it is rolled back.
func (s *SQLStore) execInTx(ctx context.Context, q string, args ...any) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() // after Commit it does nothing
	res, err := tx.ExecContext(ctx, q, args...)
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

// Cleanup deletes the rows older than the retention and returns how many,
// WithCleanupBatch per statement, so that ctx may stop it without losing what it did.
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

// exec runs one statement, retried while SQLite is busy, and returns the rows it affected.
func (s *SQLStore) exec(ctx context.Context, q string, args ...any) (n int64, err error) {
	err = s.dialect.Retry(ctx, func() error {
		n, err = s.execOnce(ctx, q, args...)
		return err
	})
	return n, err
}

// execOnce runs one statement. SQLite's busy handler ignores a cancelled
// context, so under a deadline the connection's busy timeout is cut to what
// is left of it for the statement, and put back after.
func (s *SQLStore) execOnce(ctx context.Context, q string, args ...any) (int64, error) {
	var ex interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	} = s.db
	if deadline, ok := ctx.Deadline(); ok && s.dialect == mediagen.SQLite {
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
		ex = conn
	}
	res, err := ex.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// maybeCleanup starts a Cleanup, apart from the claim, once the interval has
// passed; it is cut off at the next interval, so runs never pile up.
func (s *SQLStore) maybeCleanup(ctx context.Context, now time.Time) {
	if s.interval <= 0 {
		return
	}
	next, n := s.nextCleanup.Load(), now.UnixNano()
	// An interval past the year 2262 would wrap: it saturates instead.
	if n < next || !s.nextCleanup.CompareAndSwap(next, n+min(int64(s.interval), math.MaxInt64-n)) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.interval)
	go func() {
		defer cancel()
		if _, err := s.Cleanup(ctx); err != nil { // nobody waits: the next run retries
			slog.WarnContext(ctx, "webhook: background cleanup failed", "table", s.table, "err", err)
		}
	}()
}

// fail wraps a database error; when ctx ended, ctx's error, which drivers word variously.
func (s *SQLStore) fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = ctxErr
	}
	return fmt.Errorf("webhook: SQL store %s: %w", op, err)
}
