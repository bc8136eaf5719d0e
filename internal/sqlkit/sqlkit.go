// Package sqlkit holds what the SDK's tables on database/sql share
// (client/journal, poll's event exchange): table names checked before they
// are written into statements, SQLite's busy errors told apart without
// importing a driver, and a CREATE that two processes can run at once.
// Package webhook keeps its own copy: it imports only the standard library
// and the models.
package sqlkit

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/mediagen/mediagen-go/internal/retry"
)

// ValidIdentifier reports whether name is a plain identifier of at most max
// bytes: letters, digits and underscores, not starting with a digit. Such a
// name can be written, quoted, into a statement.
func ValidIdentifier(name string, max int) bool {
	if name == "" || len(name) > max {
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

// Busy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED, by the
// driver's code when it has one (modernc.org/sqlite) and by its message
// otherwise, so that no driver needs to be imported.
func Busy(err error) bool {
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

// createAttempts bounds the tries of a SQLite CREATE that found the
// database busy.
const createAttempts = 10

// Create runs the CREATE statements stmts so that processes starting
// together do not fail each other. On PostgreSQL two CREATE TABLE IF NOT
// EXISTS racing can both pass the check and one then fails on the
// catalog's unique index, so an advisory lock named lock, held to commit,
// orders them. On SQLite a connection that switches the file to WAL, or
// one whose snapshot went stale, can get SQLITE_BUSY without its busy
// timeout being consulted: that is retried.
func Create(ctx context.Context, db *sql.DB, postgres bool, lock string, stmts []string) error {
	if postgres {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() // after Commit it does nothing
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, lock); err != nil {
			return err
		}
		for _, q := range stmts {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return tx.Commit()
	}
	p := retry.Policy{MaxRetries: createAttempts - 1, WaitMin: 20 * time.Millisecond, WaitMax: 200 * time.Millisecond}
	return retry.Do(ctx, retry.Wall, p, func(int) retry.Outcome {
		err := execAll(ctx, db, stmts)
		return retry.Outcome{Err: err, Retry: err != nil && Busy(err)}
	}, nil)
}

func execAll(ctx context.Context, db *sql.DB, stmts []string) error {
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// Rebind numbers the ? placeholders of q for PostgreSQL ($1, $2, ...) and
// returns q as it is for SQLite. No statement of the SDK has a ? in a
// literal.
func Rebind(postgres bool, q string) string {
	if !postgres {
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
