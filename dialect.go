package mediagen

import "fmt"

// Dialect is the SQL dialect of a database behind one of the SDK's tables:
// the journal of charging calls (client/journal), the webhook delivery store
// (webhook) and the hub's event exchange (hub). One type serves all three, so
// a program that keeps them in one database names its dialect once.
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

// Check returns an error naming the dialects the stores speak when d is not
// one of them.
func (d Dialect) Check() error {
	if d != PostgreSQL && d != SQLite {
		return fmt.Errorf("unknown dialect %v; want mediagen.PostgreSQL or mediagen.SQLite", d)
	}
	return nil
}
