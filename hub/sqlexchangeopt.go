package hub

import (
	"fmt"
	"time"

	"github.com/mediagen/mediagen-go"
)

// SQLExchangeOption configures [OpenSQLExchange], in the shape of every
// option of the SDK: it returns an error for a value it refuses, and
// OpenSQLExchange reports all of them.
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
		if err := mediagen.CheckTable(name); err != nil {
			return fmt.Errorf("hub: WithExchangeTable(%q): %w", name, err)
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
			return fmt.Errorf("hub: WithExchangeRetention(%s): want a positive duration", d)
		}
		o.retain = d
		return nil
	}
}
