package mediagen

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Dialect is the SQL dialect of the database behind the SDK's tables: the
// journal (client/journal), the webhook delivery store (webhook) and the
// hub's exchange (hub). Its methods are what the three stores share.
type Dialect int

// The dialects the SQL stores speak.
const (
	// PostgreSQL is PostgreSQL 9.5 or later (INSERT ... ON CONFLICT), with
	// placeholders $1, $2, ... as pgx and lib/pq expect.
	PostgreSQL Dialect = iota + 1
	// SQLite is SQLite 3.24 or later (INSERT ... ON CONFLICT), with ?
	// placeholders.
	SQLite
)

// String returns the dialect's name.
func (d Dialect) String() string {
	switch d {
	case PostgreSQL:
		return "PostgreSQL"
	case SQLite:
		return "SQLite"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// Check returns an error naming the dialects the stores speak when d is
// not one of them.
func (d Dialect) Check() error {
	if d != PostgreSQL && d != SQLite {
		return fmt.Errorf("unknown dialect %v; want mediagen.PostgreSQL or mediagen.SQLite", d)
	}
	return nil
}

// maxTableName keeps a store's derived index names within PostgreSQL's 63
// bytes.
const maxTableName = 48

// CheckTable returns an error when name is not a plain identifier of at
// most 48 bytes (letters, digits and underscores, not starting with a
// digit): the stores write it into their statements.
func CheckTable(name string) error {
	ok := name != "" && len(name) <= maxTableName
	for i, c := range name {
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("want letters, digits and underscores, not starting with a digit, at most %d bytes", maxTableName)
	}
	return nil
}

// Rebind numbers the ? placeholders of q ($1, $2, ...) for PostgreSQL and
// returns q as it is for SQLite. q must have no ? in a literal.
func (d Dialect) Rebind(q string) string {
	if d != PostgreSQL {
		return q
	}
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// CreateTable runs the CREATE ... IF NOT EXISTS statements stmts so that
// processes starting together do not fail each other: on PostgreSQL, where
// two racing CREATEs can both pass the check, under an advisory lock held
// to commit; on SQLite retrying SQLITE_BUSY as [Dialect.Retry] does.
func (d Dialect) CreateTable(ctx context.Context, db *sql.DB, stmts ...string) error {
	if d != PostgreSQL {
		return d.Retry(ctx, func() error {
			for _, q := range stmts {
				if _, err := db.ExecContext(ctx, q); err != nil {
					return err
				}
			}
			return nil
		})
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after Commit it does nothing
	lock := `SELECT pg_advisory_xact_lock(hashtext('mediagen create table'))`
	for _, q := range append([]string{lock}, stmts...) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// AddColumn adds column, declared by decl, to table (which must pass
// [CheckTable]) when an earlier version created it without; processes
// starting together may all call it. SQLite has no ADD COLUMN IF NOT
// EXISTS: an add that fails because another process added it first is fine.
func (d Dialect) AddColumn(ctx context.Context, db *sql.DB, table, column, decl string) error {
	alter := `ALTER TABLE "` + table + `" ADD COLUMN `
	if d == PostgreSQL {
		return d.CreateTable(ctx, db, alter+"IF NOT EXISTS "+column+" "+decl)
	}
	has := func() (bool, error) {
		var n int
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, column).Scan(&n)
		return n > 0, err
	}
	return d.Retry(ctx, func() error {
		ok, err := has()
		if err != nil || ok {
			return err
		}
		_, err = db.ExecContext(ctx, alter+column+" "+decl)
		if ok, herr := has(); err != nil && herr == nil && ok {
			return nil
		}
		return err
	})
}

// Busy waits double from busyWaitMin to busyWaitMax, about 1 to 2 s in
// all: a writer holding the lock for a moment is outwaited, one holding
// it for good is reported.
const (
	busyRetries = 9
	busyWaitMin = 20 * time.Millisecond
	busyWaitMax = 320 * time.Millisecond
)

// busyRetried, when set (by tests), sees each retry of [Dialect.Retry].
var busyRetried atomic.Pointer[func(error)]

// Retry calls op, and on SQLite again after a short jittered backoff
// while it fails with SQLITE_BUSY or SQLITE_LOCKED, up to nine times or
// until ctx ends; it returns op's last error, or ctx's. op must be safe to
// repeat after such a failure (SQLite undid it). This covers the answers
// SQLite gives without consulting a connection's busy timeout. On
// PostgreSQL op runs once.
func (d Dialect) Retry(ctx context.Context, op func() error) error {
	err := op()
	for n := 0; n < busyRetries && d == SQLite && busy(err); n++ {
		if f := busyRetried.Load(); f != nil {
			(*f)(err)
		}
		step := min(busyWaitMin<<n, busyWaitMax)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(step/2 + rand.N(step/2+1)):
		}
		err = op()
	}
	return err
}

// busy reports whether err is SQLITE_BUSY or SQLITE_LOCKED, by the
// driver's code or else its message, so no driver is imported.
func busy(err error) bool {
	if err == nil {
		return false
	}
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
