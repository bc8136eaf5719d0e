package mediagentemporal

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/mediagen/mediagen-go"
)

// DefaultTokenTable is the table OpenSQLTokens uses.
const DefaultTokenTable = "mediagen_temporal_tokens"

// SQLTokens is a TokenStore in a PostgreSQL or SQLite table, shared by
// workers and webhook receivers in other processes.
type SQLTokens struct {
	db                *sql.DB
	d                 mediagen.Dialect
	put, take, delete string
}

// SQLOption configures OpenSQLTokens.
type SQLOption func(*sqlConfig) error

type sqlConfig struct{ table string }

// WithTokenTable names the table instead of DefaultTokenTable.
func WithTokenTable(name string) SQLOption {
	return func(c *sqlConfig) error {
		if err := mediagen.CheckTable(name); err != nil {
			return fmt.Errorf("WithTokenTable: %w", err)
		}
		c.table = name
		return nil
	}
}

// OpenSQLTokens returns a SQLTokens on db, creating its table when missing.
// The program imports the database driver.
func OpenSQLTokens(ctx context.Context, db *sql.DB, d mediagen.Dialect, opts ...SQLOption) (*SQLTokens, error) {
	cfg := sqlConfig{table: DefaultTokenTable}
	errs := []error{d.Check()}
	if db == nil {
		errs = append(errs, errors.New("nil db"))
	}
	for _, o := range opts {
		if o == nil {
			errs = append(errs, errors.New("nil option"))
			continue
		}
		errs = append(errs, o(&cfg))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("mediagentemporal: OpenSQLTokens: %w", err)
	}
	table := cfg.table
	t := `"` + table + `"`
	create := `CREATE TABLE IF NOT EXISTS ` + t + ` (generation_id TEXT PRIMARY KEY, token TEXT NOT NULL, idem_key TEXT NOT NULL, save_to TEXT NOT NULL, created BIGINT NOT NULL)`
	if err := d.CreateTable(ctx, db, create); err != nil {
		return nil, fmt.Errorf("mediagentemporal: creating %s: %w", table, err)
	}
	return &SQLTokens{
		db: db, d: d,
		put: d.Rebind(`INSERT INTO ` + t + ` (generation_id, token, idem_key, save_to, created) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (generation_id) DO UPDATE SET token = excluded.token, idem_key = excluded.idem_key, save_to = excluded.save_to, created = excluded.created`),
		// DELETE ... RETURNING makes the take atomic (PostgreSQL; SQLite 3.35+).
		take: d.Rebind(`DELETE FROM ` + t + ` WHERE generation_id = ? RETURNING token, idem_key, save_to`),
		// Tokens of activities that never completed would stay forever.
		delete: d.Rebind(`DELETE FROM ` + t + ` WHERE created < ?`),
	}, nil
}

// Put stores p for id.
func (s *SQLTokens) Put(ctx context.Context, id string, p Pending) error {
	tok := base64.StdEncoding.EncodeToString(p.Token)
	return s.d.Retry(ctx, func() error {
		_, err := s.db.ExecContext(ctx, s.put, id, tok, p.Key, p.SaveTo, time.Now().UnixNano())
		return err
	})
}

// Take removes and returns the Pending of id.
func (s *SQLTokens) Take(ctx context.Context, id string) (Pending, bool, error) {
	var p Pending
	var tok string
	err := s.d.Retry(ctx, func() error {
		return s.db.QueryRowContext(ctx, s.take, id).Scan(&tok, &p.Key, &p.SaveTo)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return Pending{}, false, nil
	}
	if err != nil {
		return Pending{}, false, err
	}
	if p.Token, err = base64.StdEncoding.DecodeString(tok); err != nil {
		return Pending{}, false, fmt.Errorf("mediagentemporal: token of %s: %w", id, err)
	}
	return p, true, nil
}

// Cleanup deletes the tokens stored before before, of activities that
// timed out long ago, and returns how many it deleted.
func (s *SQLTokens) Cleanup(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.d.Retry(ctx, func() error {
		r, err := s.db.ExecContext(ctx, s.delete, before.UnixNano())
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return n, err
}
