package riverjob

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client/journal"
)

// finishedStates lists River's job states after which a job runs no more, unless an
// operator retries it.
const finishedStates = `('cancelled', 'completed', 'discarded')`

// Reconcile ends the reservations that jobs River finished (cancelled,
// discarded, completed) or deleted left held, and returns how many it
// ended. By the key's journal record: none (nothing sent) releases it; a
// generation settles it at the cost its webhook event gave (released when
// refunded), else at the estimate; in doubt, as for a hold that lapsed
// without a generation, the estimate stays spent. A key a live caller
// holds waits for a later call. Workers run it before a submit, at most
// every 5 seconds; run it yourself to see Budget right while none submits.
// It reads River's job table (river_job, in the connection's default
// schema).
func (s *Store) Reconcile(ctx context.Context) (int, error) {
	type held struct {
		key                   string
		job, updated, version int64
	}
	var found []held
	err := func() error {
		rows, err := s.db.QueryContext(ctx, `SELECT r.key, r.job_id, r.updated, r.version FROM mediagen_river_reservations r
			LEFT JOIN river_job j ON j.id = r.job_id WHERE r.state = 'held' AND (j.id IS NULL OR j.state IN `+finishedStates+`)`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h held
			if err := rows.Scan(&h.key, &h.job, &h.updated, &h.version); err != nil {
				return err
			}
			found = append(found, h)
		}
		return rows.Err()
	}()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, h := range found {
		state, charged, err := s.outcome(ctx, h.key, time.UnixMilli(h.updated))
		if err != nil {
			return n, err
		}
		if state == "" {
			continue
		}
		if s.beforeEnd != nil {
			s.beforeEnd(h.key)
		}
		// Only at the version read: an attempt that reserved or sent on it
		// since (one running still, an operator's retry, a new job of the
		// key) keeps it. That is checked on the row itself, which
		// PostgreSQL reads afresh once it has locked it; the river_job test
		// below reads the statement's snapshot, a job retried while it runs
		// is not seen, but such a job's attempt moves the version before it
		// may send.
		ended, err := s.end(ctx, h.key, state, charged, ` AND version = ? AND NOT EXISTS (
			SELECT 1 FROM river_job j WHERE j.id = ? AND j.state NOT IN `+finishedStates+`)`, h.version, h.job)
		if err != nil {
			return n, err
		}
		if ended {
			n++
		}
	}
	return n, nil
}

// outcome is how the reservation of key, held since held, ends once its job
// is over: its state, and what was charged in millionths of USD (NULL for
// the amount held); state is "" while a live caller holds the key.
func (s *Store) outcome(ctx context.Context, key string, held time.Time) (string, sql.NullInt64, error) {
	estimate, none := sql.NullInt64{}, sql.NullInt64{Valid: true}
	rec, err := s.journal.Get(ctx, key)
	switch {
	case errors.Is(err, journal.ErrNotFound) && time.Since(held) < journal.Retention:
		return "released", none, nil
	case errors.Is(err, journal.ErrNotFound): // the record may have been cleaned up
		return "settled", estimate, nil
	case err != nil:
		return "", estimate, err
	case rec.ID == "" && rec.Held(time.Now()):
		return "", estimate, nil
	case rec.ID == "":
		return "settled", estimate, nil
	}
	return s.byEvent(ctx, rec.ID)
}

// gone ends the reservation of key, whose generation id the service no
// longer has (expired or deleted), as Reconcile would.
func (s *Store) gone(ctx context.Context, key, id string) error {
	state, charged, err := s.byEvent(ctx, id)
	if err == nil {
		_, err = s.end(ctx, key, state, charged, "")
	}
	return err
}

// byEvent is how a reservation whose generation id was sent ends when only
// the generation's stored webhook event can tell: settled at its cost when
// done, released when refunded, else settled at the amount held, as the
// generation was charged when accepted.
func (s *Store) byEvent(ctx context.Context, id string) (string, sql.NullInt64, error) {
	estimate, none := sql.NullInt64{}, sql.NullInt64{Valid: true}
	var body sql.NullString
	err := s.db.QueryRowContext(ctx, s.d.Rebind(`SELECT body FROM mediagen_river_generations WHERE id = ?`), id).Scan(&body)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", estimate, err
	}
	var g mediagen.Generation
	if body.Valid && json.Unmarshal([]byte(body.String), &g) == nil {
		switch g.Status {
		case mediagen.GenerationStatusDone:
			return "settled", sql.NullInt64{Int64: micros(g.BalanceUsed), Valid: true}, nil
		case mediagen.GenerationStatusError, mediagen.GenerationStatusTimeout:
			return "released", none, nil // refunded
		}
	}
	return "settled", estimate, nil
}

// cleanup deletes the reservations that ended before before, and the
// generations recorded before it whose job is over or gone.
func (s *Store) cleanup(ctx context.Context, before time.Time) error {
	for _, q := range []string{
		`DELETE FROM mediagen_river_reservations WHERE state <> 'held' AND updated < ?`,
		`DELETE FROM mediagen_river_generations WHERE created < ? AND NOT EXISTS (
			SELECT 1 FROM river_job j WHERE j.id = mediagen_river_generations.job_id AND j.state NOT IN ` + finishedStates + `)`,
	} {
		err := s.d.Retry(ctx, func() error {
			_, err := s.db.ExecContext(ctx, s.d.Rebind(q), before.UnixMilli())
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
