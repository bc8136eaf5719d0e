package poll

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// SQLExchangeOption configures [NewSQLExchange], in the shape of every
// option of the SDK: it returns an error for a value it refuses, and
// NewSQLExchange reports all of them.
type SQLExchangeOption func(*sqlExchangeOptions) error

type sqlExchangeOptions struct {
	table  string
	retain time.Duration
}

// WithExchangeTable sets the table the exchange keeps its events in; the
// default is [DefaultExchangeTable]. The name is a plain identifier
// (letters, digits and underscores, not starting with a digit, at most 48
// bytes), since it is written into the statements, quoted. To use another
// PostgreSQL schema, set the search_path of the connection.
func WithExchangeTable(name string) SQLExchangeOption {
	return func(o *sqlExchangeOptions) error {
		if !validTable(name) {
			return fmt.Errorf("poll: WithExchangeTable(%q): want letters, digits and underscores, not starting with a digit, at most %d bytes", name, maxExchangeTable)
		}
		o.table = name
		return nil
	}
}

// WithExchangeRetention sets how long the exchange keeps an event (default
// [DefaultExchangeRetention]); d must be positive. A hub that starts reads
// the events of the last d, so a wait that begins after its event was
// shared still finds it. Publish deletes older rows, in batches, at most
// once a minute.
func WithExchangeRetention(d time.Duration) SQLExchangeOption {
	return func(o *sqlExchangeOptions) error {
		if d <= 0 {
			return fmt.Errorf("poll: WithExchangeRetention(%s): want a positive duration", d)
		}
		o.retain = d
		return nil
	}
}

// sqliteBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED,
// by the driver's code when it has one (modernc.org/sqlite) and by its
// message otherwise, so that no driver needs to be imported.
func sqliteBusy(err error) bool {
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

func validTable(name string) bool {
	if name == "" || len(name) > maxExchangeTable {
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
