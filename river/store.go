package riverjob

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client/journal"
)

// Store is the state the workers of a queue share in its database, beside
// River's own tables: the journal of charging calls, the generations the
// jobs wait on (and the webhook events that ended them), and the budget.
// Every worker and every webhook receiver opens it on the same database.
type Store struct {
	db      *sql.DB
	d       mediagen.Dialect
	journal *journal.SQL

	beforeEnd func(key string) // for tests: runs in Reconcile before it ends key's reservation
}

// Open returns the store over db, creating its tables and the journal's
// (journal.DefaultTable) when they do not exist yet, so every process may
// call it at start-up; tables an earlier version created gain the columns
// they lack. d is mediagen.PostgreSQL or mediagen.SQLite.
func Open(ctx context.Context, db *sql.DB, d mediagen.Dialect) (*Store, error) {
	if db == nil {
		return nil, errors.New("riverjob: nil database")
	}
	if err := d.Check(); err != nil {
		return nil, err
	}
	j, err := journal.Open(ctx, db, d)
	if err != nil {
		return nil, err
	}
	err = d.CreateTable(ctx, db,
		`CREATE TABLE IF NOT EXISTS mediagen_river_generations (
			id text PRIMARY KEY, job_id bigint NOT NULL DEFAULT 0, body text, result text, created bigint NOT NULL DEFAULT 0)`,
		`CREATE TABLE IF NOT EXISTS mediagen_river_budgets (
			queue text PRIMARY KEY, cap bigint NOT NULL, held bigint NOT NULL DEFAULT 0, spent bigint NOT NULL DEFAULT 0)`,
		`CREATE TABLE IF NOT EXISTS mediagen_river_reservations (
			key text PRIMARY KEY, queue text NOT NULL, amount bigint NOT NULL, charged bigint NOT NULL DEFAULT 0,
			state text NOT NULL, job_id bigint NOT NULL DEFAULT 0, updated bigint NOT NULL DEFAULT 0,
			version bigint NOT NULL DEFAULT 0)`,
		`CREATE INDEX IF NOT EXISTS mediagen_river_reservations_held ON mediagen_river_reservations (key) WHERE state = 'held'`,
	)
	if err != nil {
		return nil, fmt.Errorf("riverjob: creating tables: %w", err)
	}
	// Times are unix milliseconds: created, when a generation was first
	// recorded; updated, when a reservation was last held or ended. A
	// reservation's version counts the reserves and sends on it (see own).
	for _, c := range [][3]string{
		{"mediagen_river_generations", "result", "text"},
		{"mediagen_river_generations", "created", "bigint NOT NULL DEFAULT 0"},
		{"mediagen_river_reservations", "job_id", "bigint NOT NULL DEFAULT 0"},
		{"mediagen_river_reservations", "updated", "bigint NOT NULL DEFAULT 0"},
		{"mediagen_river_reservations", "version", "bigint NOT NULL DEFAULT 0"},
	} {
		if err := d.AddColumn(ctx, db, c[0], c[1], c[2]); err != nil {
			return nil, fmt.Errorf("riverjob: adding the %s column to %s: %w", c[1], c[0], err)
		}
	}
	return &Store{db: db, d: d, journal: j}, nil
}

// Journal returns the journal of charging calls in the store's database.
// Give it to the workers' client (client.WithJournal): that is what makes a
// job that River runs again find its generation instead of charging twice.
func (s *Store) Journal() *journal.SQL { return s.journal }

// Budget is a queue's shared budget, in USD.
type Budget struct {
	Cap   float64 // the most the queue may spend
	Held  float64 // reserved by jobs sent or about to be, not settled yet
	Spent float64 // charged for generations done
}

// SetBudget sets the most the jobs of queue may spend, in USD, together,
// whichever worker runs them. What is already held or spent is kept. Jobs
// reserve only while the queue has a budget: set it before inserting jobs,
// as a job already sent without one is not counted.
func (s *Store) SetBudget(ctx context.Context, queue string, capUSD float64) error {
	if capUSD < 0 || math.IsNaN(capUSD) || math.IsInf(capUSD, 0) {
		return fmt.Errorf("riverjob: budget %v: must be a number of USD, 0 or more", capUSD)
	}
	return s.d.Retry(ctx, func() error {
		_, err := s.db.ExecContext(ctx, s.d.Rebind(`INSERT INTO mediagen_river_budgets (queue, cap) VALUES (?, ?)
			ON CONFLICT (queue) DO UPDATE SET cap = excluded.cap`), queue, micros(min(capUSD, maxCapUSD)))
		return err
	})
}

// Budget returns queue's budget; ok is false when it has none.
func (s *Store) Budget(ctx context.Context, queue string) (b Budget, ok bool, err error) {
	var capM, held, spent int64
	err = s.db.QueryRowContext(ctx, s.d.Rebind(`SELECT cap, held, spent FROM mediagen_river_budgets WHERE queue = ?`), queue).
		Scan(&capM, &held, &spent)
	if errors.Is(err, sql.ErrNoRows) {
		return Budget{}, false, nil
	}
	if err != nil {
		return Budget{}, false, err
	}
	return Budget{Cap: usd(capM), Held: usd(held), Spent: usd(spent)}, true, nil
}

// reserve holds amount of queue's budget for key, once per key: a job run
// again finds its reservation, which then names job (Reconcile ends it when
// that job is over). Unless the key is recorded in the journal, it is sent
// anew, a new charge: a settled reservation no longer counts, and a held
// one, of a call that sent nothing, is raised to amount. It reports false
// when the budget has no room, with whether other reservations are held
// that may free some; a queue without a budget always has room.
//
// When ok, fence is the reservation's version the caller now holds it at
// (see own), 0 when it holds nothing to send on (no budget; a reservation
// settled already counts the key). Each reserve moves the version on: an
// earlier attempt of the job, still running, no longer holds it.
func (s *Store) reserve(ctx context.Context, queue, key string, job int64, amountUSD float64, recorded bool) (fence int64, ok, others bool, err error) {
	amount := micros(amountUSD)
	err = s.tx(ctx, func(tx *sql.Tx) error {
		fence, ok, others = 0, false, false
		var state, was string
		var old int64
		err := tx.QueryRowContext(ctx, s.d.Rebind(`UPDATE mediagen_river_reservations SET job_id = ?, version = version + 1
			WHERE key = ? RETURNING state, queue, amount, version`), job, key).Scan(&state, &was, &old, &fence)
		switch {
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return err
		case state == "held" && (recorded || was != queue || old >= amount):
			ok = true
			return nil
		case state == "settled" && recorded:
			fence, ok = 0, true
			return nil
		case state != "held":
			old = 0
		}
		res, err := tx.ExecContext(ctx, s.d.Rebind(`UPDATE mediagen_river_budgets SET held = held + ?
			WHERE queue = ? AND spent + held + ? <= cap`), amount-old, queue, amount-old)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			var held int64
			err := tx.QueryRowContext(ctx, s.d.Rebind(`SELECT held FROM mediagen_river_budgets WHERE queue = ?`), queue).Scan(&held)
			if errors.Is(err, sql.ErrNoRows) {
				fence, ok = 0, true // no budget
				return nil
			}
			others = held > old
			return err
		}
		ok = true
		return tx.QueryRowContext(ctx, s.d.Rebind(`INSERT INTO mediagen_river_reservations (key, queue, amount, state, job_id, updated, version)
			VALUES (?, ?, ?, 'held', ?, ?, 1) ON CONFLICT (key) DO UPDATE SET queue = excluded.queue, amount = excluded.amount,
			charged = 0, state = 'held', job_id = excluded.job_id, updated = excluded.updated,
			version = mediagen_river_reservations.version + 1 RETURNING version`),
			key, queue, amount, job, time.Now().UnixMilli()).Scan(&fence)
	})
	return fence, ok, others, err
}

// own moves key's reservation on from version fence, when it is still held
// there: nobody reserved it since (an attempt of the job River rescued from
// the caller) nor ended it (the attempt that did, or Reconcile). A worker
// calls it after claiming the key, before each send, and sends only if it
// reports true, at fence+1 from then on: so no generation is sent on a
// reservation that may be given back, and Reconcile, which ends one only at
// the version it read, never ends one that is sent on meanwhile.
func (s *Store) own(ctx context.Context, key string, fence int64) (ok bool, err error) {
	err = s.d.Retry(ctx, func() error {
		res, err := s.db.ExecContext(ctx, s.d.Rebind(`UPDATE mediagen_river_reservations SET version = version + 1
			WHERE key = ? AND version = ? AND state = 'held'`), key, fence)
		if err == nil {
			var n int64
			n, err = res.RowsAffected()
			ok = n == 1
		}
		return err
	})
	return ok, err
}

// release gives back key's reservation, held at version fence by a caller
// that sent nothing, unless another reserved it since; 0 holds none.
func (s *Store) release(ctx context.Context, key string, fence int64) error {
	if fence == 0 {
		return nil
	}
	_, err := s.end(ctx, key, "released", sql.NullInt64{Valid: true}, ` AND version = ?`, fence)
	return err
}

// settle ends key's reservation: state "settled" moves the charged amount to
// spent, "released" gives it all back (a refusal or a refund). It does
// nothing when key holds no reservation, so it may be repeated.
func (s *Store) settle(ctx context.Context, key, state string, chargedUSD float64) error {
	_, err := s.end(ctx, key, state, sql.NullInt64{Int64: micros(chargedUSD), Valid: true}, "")
	return err
}

// end ends key's reservation as settle does, with charged in millionths of
// USD, or the amount held when charged is NULL, if the condition cond (on
// the reservation's row, with the arguments condArgs) holds too. It reports
// whether it ended it.
func (s *Store) end(ctx context.Context, key, state string, charged sql.NullInt64, cond string, condArgs ...any) (bool, error) {
	ended := false
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var queue string
		var amount, spent int64
		err := tx.QueryRowContext(ctx, s.d.Rebind(`UPDATE mediagen_river_reservations
			SET state = ?, charged = coalesce(?, amount), updated = ? WHERE key = ? AND state = 'held'`+cond+`
			RETURNING queue, amount, charged`), append([]any{state, charged, time.Now().UnixMilli(), key}, condArgs...)...).
			Scan(&queue, &amount, &spent)
		ended = err == nil
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if state != "settled" {
			spent = 0
		}
		_, err = tx.ExecContext(ctx, s.d.Rebind(`UPDATE mediagen_river_budgets SET held = held - ?, spent = spent + ?
			WHERE queue = ?`), amount, spent, queue)
		return err
	})
	return ended, err
}

// submitted records that job waits on generation id and returns the body of
// its terminal webhook event, when one arrived already, and the job's
// result, when a run of the job finished already (nil otherwise).
func (s *Store) submitted(ctx context.Context, id string, job int64) (body, result []byte, err error) {
	err = s.d.Retry(ctx, func() error {
		var b, r sql.NullString
		err := s.db.QueryRowContext(ctx, s.d.Rebind(`INSERT INTO mediagen_river_generations (id, job_id, created) VALUES (?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET job_id = excluded.job_id RETURNING body, result`), id, job, time.Now().UnixMilli()).Scan(&b, &r)
		body, result = nil, nil
		if b.Valid {
			body = []byte(b.String)
		}
		if r.Valid {
			result = []byte(r.String)
		}
		return err
	})
	return body, result, err
}

// finished records the result of the job that waited on generation id, so
// that a run of the job after it completed (a wake racing the completion)
// records it again instead of saving the outputs again.
func (s *Store) finished(ctx context.Context, id string, result []byte) error {
	return s.d.Retry(ctx, func() error {
		_, err := s.db.ExecContext(ctx, s.d.Rebind(`UPDATE mediagen_river_generations SET result = ? WHERE id = ?`), string(result), id)
		return err
	})
}

// ended records the terminal event body of generation id and returns the
// job waiting on it (0 when none has recorded it yet).
func (s *Store) ended(ctx context.Context, id string, body []byte) (job int64, err error) {
	err = s.d.Retry(ctx, func() error {
		return s.db.QueryRowContext(ctx, s.d.Rebind(`INSERT INTO mediagen_river_generations (id, body, created) VALUES (?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET body = excluded.body RETURNING job_id`), id, string(body), time.Now().UnixMilli()).Scan(&job)
	})
	return job, err
}

// tx runs fn in a transaction, committed when fn returns nil; on SQLite a
// busy answer runs it again from the start.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	return s.d.Retry(ctx, func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

// maxCapUSD is the largest budget kept: a larger one (math.MaxFloat64, for
// no limit) overflowed the millionths to a negative cap.
const maxCapUSD = 1 << 62 / 1e6

// micros converts USD to the millionths the tables keep, so sums are exact.
func micros(v float64) int64 { return int64(math.Round(v * 1e6)) }

func usd(m int64) float64 { return float64(m) / 1e6 }
