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
	// DefaultExchangeRetention is how long an [SQLExchange] keeps an event:
	// as long as a hub remembers one ([DefaultRetention]).
	DefaultExchangeRetention = time.Hour
)

const (
	// exchangePage is the most rows one SELECT of Since reads.
	exchangePage = 1000
	// exchangePages bounds the SELECTs of one Since.
	exchangePages = 10
	// exchangeSettle is how long a gap in the sequence may stay open before
	// Since moves its cursor past it (see Since).
	exchangeSettle = 5 * time.Second
	// exchangeCleanupEvery is how often Publish starts a cleanup.
	exchangeCleanupEvery = time.Minute
	// exchangeCleanupBatch is the most rows one DELETE of Cleanup removes.
	exchangeCleanupBatch = 1000
)

// SQLExchange is an [Exchange] in a table of a database reached through
// database/sql, such as the one the receivers' webhook.SQLStore uses: every
// replica's hub publishes there the events it receives and reads those of
// the others. Any driver works; the dialect picks the SQL. It is safe for
// concurrent use, by any number of hubs.
//
// It keeps one row per shared event:
//
//	seq      bigserial primary key (PostgreSQL), integer primary key autoincrement (SQLite)
//	body     text: the event as the service sent it
//	created  bigint: unix milliseconds, by the database's clock
//
// and an index on created, for the first read of a hub and for cleanup.
// Times come from the database's clock, not the replicas', so that replicas
// whose clocks disagree agree on the age of a row.
//
// SQLite serves the processes of one host sharing the file. Open it with
// WAL journaling and a busy timeout (modernc.org/sqlite:
// "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)"), so that a writer
// waits for another's lock instead of failing; a statement SQLite still
// answers busy is tried again through [mediagen.Dialect.Retry]. On
// PostgreSQL, leave the sequence's CACHE at 1, the default of bigserial
// (see Since).
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

// SQLExchangeOption configures [OpenSQLExchange], in the shape of every
// option of the SDK: it returns an error for a value it refuses, and
// OpenSQLExchange reports all of them.
type SQLExchangeOption func(*SQLExchange) error

// WithExchangeTable sets the table the exchange keeps its events in; the
// default is [DefaultExchangeTable]. The name is a plain identifier
// (letters, digits and underscores, not starting with a digit, at most 48
// bytes), since it is written into the statements, quoted. To use another
// PostgreSQL schema, set the search_path of the connection.
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
// [DefaultExchangeRetention]); d must be positive. A hub that starts reads
// the events of the last d, so a wait that begins after its event was
// shared still finds it. Publish deletes older rows, in batches, at most
// once a minute.
func WithExchangeRetention(d time.Duration) SQLExchangeOption {
	return func(x *SQLExchange) error {
		if d <= 0 {
			return fmt.Errorf("hub: WithExchangeRetention(%s): want a positive duration", d)
		}
		x.retain = d
		return nil
	}
}

// OpenSQLExchange returns an exchange over db in the table of
// [WithExchangeTable], creating the table and its index when they do not
// exist yet, so every replica may call it at start-up. d is
// mediagen.PostgreSQL or mediagen.SQLite. The error names every invalid
// argument and option, or is the database's.
func OpenSQLExchange(ctx context.Context, db *sql.DB, d mediagen.Dialect, opts ...SQLExchangeOption) (*SQLExchange, error) {
	x := &SQLExchange{db: db, dialect: d, table: DefaultExchangeTable, retain: DefaultExchangeRetention}
	var errs []error
	if db == nil {
		errs = append(errs, errors.New("hub: OpenSQLExchange: nil *sql.DB"))
	}
	if err := d.Check(); err != nil {
		errs = append(errs, fmt.Errorf("hub: OpenSQLExchange: %w", err))
	}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(x); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	create := x.prepare()
	x.nextCleanup.Store(time.Now().Add(exchangeCleanupEvery).UnixNano())
	if err := d.CreateTable(ctx, db, create...); err != nil {
		return nil, x.fail(ctx, "create table", err)
	}
	return x, nil
}

// prepare writes the statements once and returns those that create the
// table. The table name was validated and is quoted besides.
func (x *SQLExchange) prepare() (create []string) {
	t := `"` + x.table + `"`
	// The database's clock in unix milliseconds: SQLite's is the host's.
	seq := `INTEGER PRIMARY KEY AUTOINCREMENT`
	now := `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`
	stmtNow := now
	if x.dialect == mediagen.PostgreSQL {
		// A row's time when it is written; a read's when its snapshot was
		// taken.
		seq = `BIGSERIAL PRIMARY KEY`
		now = `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`
		stmtNow = `(extract(epoch FROM statement_timestamp()) * 1000)::bigint`
	}
	x.insert = x.dialect.Rebind(`INSERT INTO ` + t + ` (body, created) VALUES (?, ` + now + `)`)
	sel := `SELECT seq, body, created, ` + stmtNow + ` FROM ` + t + ` WHERE seq > ?`
	order := ` ORDER BY seq LIMIT ` + strconv.Itoa(exchangePage)
	x.since = x.dialect.Rebind(sel + order)
	x.sinceT = x.dialect.Rebind(sel + ` AND created >= ` + stmtNow + ` - ?` + order)
	x.cleanup = x.dialect.Rebind(`DELETE FROM ` + t + ` WHERE seq IN (SELECT seq FROM ` + t + ` WHERE created < ` + stmtNow + ` - ? LIMIT ?)`)
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + t + ` (seq ` + seq + `, body TEXT NOT NULL, created BIGINT NOT NULL)`,
		`CREATE INDEX IF NOT EXISTS "` + x.table + `_created" ON ` + t + ` (created)`,
	}
}

// Publish implements [Exchange]: one INSERT of the event's verified body
// (ev.Raw), or, for an event built in code, of its name and generation or
// voice as JSON. Once a minute it also starts a [SQLExchange.Cleanup] in the
// background.
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

// eventBody is what Publish stores of ev.
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

// Since implements [Exchange]: the events with a seq above cursor, in
// order, up to ten pages of a thousand rows. At cursor 0 (a hub's first
// read) it starts from the events of the last retention period.
//
// The cursor it returns is not simply the last seq read. A sequence value
// is taken when a row is inserted but becomes visible when its transaction
// commits, and PostgreSQL commits concurrent inserts in any order: a reader
// may see seq 8 while 7 is still on its way, and one that moved its cursor
// to 8 would never read 7. So the cursor moves only past rows with no hole
// below them. At a hole, the rows above it are returned at once (their
// waits end without delay) but the cursor stays below it, and the next
// Since reads them again, which a hub ignores, until either the hole fills
// or the row above it is older than a settle window of five seconds by the
// database's clock: a value that was taken and not committed by then
// belongs to an insert that failed (values of failed inserts are never
// reused) or to a commit so slow that the waits' backstop polling is the
// better path. We chose this over tracking the holes in memory because it
// keeps the exchange stateless, one cursor per reader, and because holes are
// rare and short, so the extra reading is small; over re-reading a whole
// recent window at every read because that costs every read, holes or not.
// SQLite commits one writer at a time, in seq order, so its only holes are
// failed inserts. A PostgreSQL sequence with a CACHE above 1 hands each
// session a block of values, leaving holes that last as long as a session
// has values left: such rows would be read only by the waits' backstop.
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
			// A row that is not an event (written by something else) is
			// passed over: no wait can be for it.
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

// page reads the rows above from, within the retention at a hub's first
// read (cursor 0), retried while SQLite is busy.
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

// decodeExchanged reads a stored body back into an event.
func decodeExchanged(body []byte) (*webhook.Event, bool) {
	var e exchangedEvent
	if err := json.Unmarshal(body, &e); err != nil || e.Event == "" || (e.Generation == nil && e.Voice == nil) {
		return nil, false
	}
	return &webhook.Event{Name: e.Event, Generation: e.Generation, Voice: e.Voice, Raw: body}, true
}

// Cleanup deletes the events older than the retention, by the database's
// clock, and returns how many it deleted. It deletes at most a thousand
// rows per statement, each its own transaction, until a statement deletes
// fewer, so it may be stopped through ctx at any point without losing what
// it did. Publish calls it in the background once a minute; call it
// yourself only on a table nobody publishes to.
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

// maybeCleanup starts a Cleanup when a minute has passed since the last one
// this exchange started (or since OpenSQLExchange). It runs apart from the
// Publish, so the delivery is not kept waiting, and is cut off after a
// minute so that runs never pile up.
func (x *SQLExchange) maybeCleanup(ctx context.Context) {
	now := time.Now()
	next := x.nextCleanup.Load()
	if now.UnixNano() < next || !x.nextCleanup.CompareAndSwap(next, now.Add(exchangeCleanupEvery).UnixNano()) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exchangeCleanupEvery)
	x.cleaning.Add(1)
	go func() {
		defer x.cleaning.Done()
		defer cancel()
		if _, err := x.Cleanup(ctx); err != nil {
			// Nobody waits for this run; the next one retries.
			slog.WarnContext(ctx, "hub: background cleanup of shared events failed", "table", x.table, "err", err)
		}
	}()
}

// exec runs one statement, retried while SQLite is busy, and returns the
// rows it affected.
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

// fail wraps a database error; when ctx ended, that is the error, as the
// driver's own words for it vary.
func (x *SQLExchange) fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = ctxErr
	}
	return fmt.Errorf("hub: SQL exchange %s: %w", op, err)
}
