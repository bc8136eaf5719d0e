package hub

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/webhook"
)

// Defaults of [OpenSQLExchange].
const (
	// DefaultExchangeTable is the table an [SQLExchange] keeps its events in.
	DefaultExchangeTable = "mediagen_events"
	// DefaultExchangeRetention is how long an [SQLExchange] keeps an event: as
	// long as a hub remembers one ([DefaultRetention]).
	DefaultExchangeRetention = time.Hour
)

const (
	exchangePage  = 1000 // the most rows one SELECT of Since reads
	exchangePages = 10   // the most SELECTs of one Since
	// exchangeSettle is how long a hole in the sequence may stay open before
	// Since moves its cursor past it.
	exchangeSettle       = 5 * time.Second
	exchangeCleanupEvery = time.Minute
	exchangeCleanupBatch = 1000 // the most rows one DELETE of Cleanup removes
)

// SQLExchange is an [Exchange] in a table of a database/sql database, where
// every replica's hub publishes the events it receives and reads the others'.
// Any driver works; the dialect picks the SQL. It is safe for concurrent use
// by any number of hubs. Its table has one row per event, and an index on created:
//
//	seq      bigserial primary key (PostgreSQL), integer primary key autoincrement (SQLite)
//	body     text: the event as the service sent it
//	created  bigint: unix milliseconds, by the database's clock, which all replicas share
//
// With SQLite (processes of one host), open the file with WAL and a busy
// timeout (modernc.org/sqlite: "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)");
// a statement still busy is retried ([mediagen.Dialect.Retry]). On
// PostgreSQL, leave the sequence's CACHE at 1, bigserial's default (see Since).
type SQLExchange struct {
	db      *sql.DB
	dialect mediagen.Dialect
	table   string
	retain  time.Duration

	insert, since, sinceT string // sinceT: since, within the retention
	cleanup               string

	nextCleanup atomic.Int64   // unix nanoseconds
	cleaning    sync.WaitGroup // the background cleanup, for tests
}

var _ Exchange = (*SQLExchange)(nil)

// SQLExchangeOption configures [OpenSQLExchange], which reports every value refused.
type SQLExchangeOption func(*SQLExchange) error

// WithExchangeTable sets the exchange's table (default [DefaultExchangeTable]):
// a plain identifier ([mediagen.CheckTable]). For another PostgreSQL schema,
// set the connection's search_path.
func WithExchangeTable(name string) SQLExchangeOption {
	return func(x *SQLExchange) error {
		if err := mediagen.CheckTable(name); err != nil {
			return fmt.Errorf("hub: WithExchangeTable(%q): %w", name, err)
		}
		x.table = name
		return nil
	}
}

// WithExchangeRetention sets how long the exchange keeps an event (default
// [DefaultExchangeRetention]); d must be positive. A hub that starts reads the
// events of the last d. Publish deletes older rows, at most once a minute.
func WithExchangeRetention(d time.Duration) SQLExchangeOption {
	return positive("hub: WithExchangeRetention", d, func(x *SQLExchange) *time.Duration { return &x.retain })
}

// OpenSQLExchange returns an exchange over db, creating its table and index
// when missing, so every replica may call it at start-up. The error names
// every invalid argument and option, or is the database's.
func OpenSQLExchange(ctx context.Context, db *sql.DB, d mediagen.Dialect, opts ...SQLExchangeOption) (*SQLExchange, error) {
	x := &SQLExchange{db: db, dialect: d, table: DefaultExchangeTable, retain: DefaultExchangeRetention}
	var errs []error
	if db == nil {
		errs = append(errs, errors.New("hub: OpenSQLExchange: nil *sql.DB"))
	}
	if err := d.Check(); err != nil {
		errs = append(errs, fmt.Errorf("hub: OpenSQLExchange: %w", err))
	}
	if err := errors.Join(append(errs, apply(x, opts)...)...); err != nil {
		return nil, err
	}
	t := `"` + x.table + `"`
	// The database's clock in unix milliseconds (SQLite's is the host's): on
	// PostgreSQL, a row's when it is written, a read's when its snapshot was taken.
	seq := `INTEGER PRIMARY KEY AUTOINCREMENT`
	now := `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`
	stmtNow := now
	if d == mediagen.PostgreSQL {
		seq = `BIGSERIAL PRIMARY KEY`
		now = `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`
		stmtNow = `(extract(epoch FROM statement_timestamp()) * 1000)::bigint`
	}
	x.insert = d.Rebind(`INSERT INTO ` + t + ` (body, created) VALUES (?, ` + now + `)`)
	sel := `SELECT seq, body, created, ` + stmtNow + ` FROM ` + t + ` WHERE seq > ?`
	order := ` ORDER BY seq LIMIT ` + strconv.Itoa(exchangePage)
	x.since = d.Rebind(sel + order)
	x.sinceT = d.Rebind(sel + ` AND created >= ` + stmtNow + ` - ?` + order)
	x.cleanup = d.Rebind(`DELETE FROM ` + t + ` WHERE seq IN (SELECT seq FROM ` + t +
		` WHERE created < ` + stmtNow + ` - ? LIMIT ?)`)
	x.nextCleanup.Store(time.Now().Add(exchangeCleanupEvery).UnixNano())
	err := d.CreateTable(ctx, db,
		`CREATE TABLE IF NOT EXISTS `+t+` (seq `+seq+`, body TEXT NOT NULL, created BIGINT NOT NULL)`,
		`CREATE INDEX IF NOT EXISTS "`+x.table+`_created" ON `+t+` (created)`)
	if err != nil {
		return nil, x.fail(ctx, "create table", err)
	}
	return x, nil
}

// Publish implements [Exchange]: one INSERT of the verified body (ev.Raw) or,
// for an event built in code, of its fields as JSON. Once a minute it also
// starts a [SQLExchange.Cleanup] in the background.
func (x *SQLExchange) Publish(ctx context.Context, ev *webhook.Event) error {
	body, err := eventBody(ev)
	if err != nil {
		return err
	}
	x.maybeCleanup(ctx)
	if _, err := x.exec(ctx, x.insert, body); err != nil {
		return x.fail(ctx, "publish", err)
	}
	return nil
}

func eventBody(ev *webhook.Event) (string, error) {
	switch {
	case ev == nil:
		return "", errors.New("hub: SQL exchange publish: nil event")
	case ev.Generation == nil && ev.Voice == nil && len(ev.Raw) == 0:
		return "", fmt.Errorf("hub: SQL exchange publish: event %q carries neither a generation nor a voice", ev.Name)
	case len(ev.Raw) > 0 && utf8.Valid(ev.Raw) && json.Valid(ev.Raw):
		return string(ev.Raw), nil
	}
	b, err := json.Marshal(exchangedEvent{Event: ev.Name, Generation: ev.Generation, Voice: ev.Voice})
	if err != nil {
		return "", fmt.Errorf("hub: SQL exchange publish: %w", err)
	}
	return string(b), nil
}

// exchangedEvent is the body of a webhook event, as the service sends it.
type exchangedEvent struct {
	Event      webhook.EventName    `json:"event"`
	Generation *mediagen.Generation `json:"generation,omitempty"`
	Voice      *mediagen.Voice      `json:"voice,omitempty"`
}

// Since implements [Exchange]: the events with a seq above cursor, in order,
// up to ten pages of a thousand rows; at cursor 0, those of the last retention.
//
// A seq is taken at insert but seen at commit, and PostgreSQL commits in any
// order: a reader may see 8 while 7 is on its way. So the cursor moves only
// past rows with no hole below; rows above one are returned now and again (a
// hub ignores repeats) until it fills or the row above it is five seconds old
// by the database's clock: then it is a failed insert or a commit so slow that
// polling is the better path. Stateless, this costs reads only while holes
// last. A PostgreSQL sequence CACHE above 1 leaves long holes: polling alone
// finds such rows.
func (x *SQLExchange) Since(ctx context.Context, cursor int64) ([]*webhook.Event, int64, error) {
	if cursor < 0 {
		return nil, cursor, fmt.Errorf("hub: SQL exchange since: negative cursor %d", cursor)
	}
	var evs []*webhook.Event
	next, from, held := cursor, cursor, false
	settle := exchangeSettle.Milliseconds()
	for range exchangePages {
		rows, err := x.page(ctx, cursor, from)
		if err != nil {
			return nil, cursor, x.fail(ctx, "since", err)
		}
		for _, r := range rows {
			from = r.seq
			if !held && (r.seq == next+1 || r.now-r.created >= settle) {
				next = r.seq
			} else {
				held = true
			}
			// A row that is not an event (written by something else) is passed over.
			if ev, ok := decodeExchanged(r.body); ok {
				evs = append(evs, ev)
			}
		}
		if len(rows) < exchangePage {
			break
		}
	}
	return evs, next, nil
}

// exchangeRow is a row of the table, with the database's time of the read.
type exchangeRow struct {
	seq, created, now int64
	body              []byte
}

// page reads the rows above from, within the retention at cursor 0.
func (x *SQLExchange) page(ctx context.Context, cursor, from int64) ([]exchangeRow, error) {
	q, args := x.since, []any{from}
	if cursor == 0 {
		q, args = x.sinceT, []any{from, x.retain.Milliseconds()}
	}
	var out []exchangeRow
	err := x.dialect.Retry(ctx, func() error {
		out = out[:0]
		rows, err := x.db.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r exchangeRow
			if err := rows.Scan(&r.seq, &r.body, &r.created, &r.now); err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

func decodeExchanged(body []byte) (*webhook.Event, bool) {
	var e exchangedEvent
	if err := json.Unmarshal(body, &e); err != nil || e.Event == "" || (e.Generation == nil && e.Voice == nil) {
		return nil, false
	}
	return &webhook.Event{Name: e.Event, Generation: e.Generation, Voice: e.Voice, Raw: body}, true
}

// Cleanup deletes the events older than the retention and returns how many,
// a thousand per statement, so that ctx may stop it without losing what it
// did. Publish runs it once a minute; call it only on a table nobody publishes to.
func (x *SQLExchange) Cleanup(ctx context.Context) (int64, error) {
	var total int64
	for {
		n, err := x.exec(ctx, x.cleanup, x.retain.Milliseconds(), exchangeCleanupBatch)
		if err != nil {
			return total, x.fail(ctx, "cleanup", err)
		}
		total += n
		if n < exchangeCleanupBatch {
			return total, nil
		}
	}
}

// maybeCleanup starts a Cleanup, apart from the Publish, once a minute has
// passed since the last; it is cut off after a minute, so runs never pile up.
func (x *SQLExchange) maybeCleanup(ctx context.Context) {
	now := time.Now()
	next := x.nextCleanup.Load()
	if now.UnixNano() < next || !x.nextCleanup.CompareAndSwap(next, now.Add(exchangeCleanupEvery).UnixNano()) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exchangeCleanupEvery)
	x.cleaning.Go(func() {
		defer cancel()
		if _, err := x.Cleanup(ctx); err != nil { // nobody waits: the next run retries
			slog.WarnContext(ctx, "hub: background cleanup of shared events failed", "table", x.table, "err", err)
		}
	})
}

// exec runs one statement, retried while SQLite is busy, and returns the rows it affected.
func (x *SQLExchange) exec(ctx context.Context, q string, args ...any) (n int64, err error) {
	err = x.dialect.Retry(ctx, func() error {
		res, err := x.db.ExecContext(ctx, q, args...)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	return n, err
}

// fail wraps a database error; when ctx ended, ctx's error, which drivers word variously.
func (x *SQLExchange) fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = ctxErr
	}
	return fmt.Errorf("hub: SQL exchange %s: %w", op, err)
}
