package journal

import (
	"errors"
	"fmt"

	"github.com/mediagen/mediagen-go/internal/sqlkit"
)

// DefaultTable is the table an SQL journal keeps its records in unless
// WithTable names another.
const DefaultTable = "mediagen_journal"

// maxTableName keeps the derived index name within PostgreSQL's 63 bytes.
const maxTableName = 48

// ErrInvalidOption is wrapped by the error of Open when an argument or an
// option is invalid.
var ErrInvalidOption = errors.New("journal: invalid option")

// Dialect is the SQL dialect of the database behind an SQL journal.
type Dialect int

// The dialects SQL speaks.
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

// Option configures Open, in the shape of every option of the SDK: it
// returns an error for a value it refuses, and Open reports all of them.
type Option func(*options) error

type options struct {
	table string
}

// WithTable sets the table the journal keeps its records in; the default is
// DefaultTable. The name is a plain identifier (letters, digits and
// underscores, not starting with a digit, at most 48 bytes), since it is
// written into the statements, quoted, so case is kept and a reserved word
// works. To use another PostgreSQL schema, set the search_path of the
// connection.
func WithTable(name string) Option {
	return func(o *options) error {
		if !sqlkit.ValidIdentifier(name, maxTableName) {
			return invalidOption("WithTable(%q): want letters, digits and underscores, not starting with a digit, at most %d bytes", name, maxTableName)
		}
		o.table = name
		return nil
	}
}

// invalidOption returns an error wrapping ErrInvalidOption; format starts
// with the option's name and the value it was given.
func invalidOption(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
}
