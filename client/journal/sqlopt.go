package journal

import (
	"errors"
	"fmt"

	"github.com/mediagen/mediagen-go"
)

// DefaultTable is the table an SQL journal keeps its records in unless
// WithTable names another.
const DefaultTable = "mediagen_journal"

// ErrInvalidOption is wrapped by the error of Open when an argument or an
// option is invalid.
var ErrInvalidOption = errors.New("journal: invalid option")

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
		if err := mediagen.CheckTable(name); err != nil {
			return invalidOption("WithTable(%q): %v", name, err)
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
