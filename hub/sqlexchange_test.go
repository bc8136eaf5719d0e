package hub

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // registers "sqlite", pure Go

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/pgtest"
	"github.com/mediagen/mediagen-go/webhook"
)

// xEngine is a database the SQL exchange is tested on: a real server or
// file, never a mock.
type xEngine struct {
	name    string
	dialect mediagen.Dialect
	driver  string
	// database returns the DSN of a new, empty database; every *sql.DB
	// opened on it sees the same rows, as replicas would.
	database func(testing.TB) string
}

var xEngines = []xEngine{
	{"SQLite", mediagen.SQLite, "sqlite", func(tb testing.TB) string {
		return "file:" + filepath.Join(tb.TempDir(), "events.db") +
			"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)"
	}},
	{"PostgreSQL", mediagen.PostgreSQL, "pgx", pgtest.DSN},
}

// forEachEngine runs fn on each engine with a new, empty database.
func forEachEngine(t *testing.T, fn func(t *testing.T, e xEngine, dsn string)) {
	for _, e := range xEngines {
		t.Run(e.name, func(t *testing.T) { fn(t, e, e.database(t)) })
	}
}

func (e xEngine) open(tb testing.TB, dsn string) *sql.DB {
	tb.Helper()
	db, err := sql.Open(e.driver, dsn)
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	db.SetMaxIdleConns(8) // a new PostgreSQL connection is a new server process
	return db
}

func (e xEngine) exchange(tb testing.TB, db *sql.DB, opts ...SQLExchangeOption) *SQLExchange {
	tb.Helper()
	x, err := OpenSQLExchange(context.Background(), db, e.dialect, opts...)
	require.NoError(tb, err)
	return x
}

// plant inserts a row with the given seq and age, as a writer whose insert
// took that number that long ago would have, and keeps the sequence ahead
// of it.
func (e xEngine) plant(t *testing.T, db *sql.DB, seq int64, age time.Duration, body string) {
	t.Helper()
	created := time.Now().Add(-age).UnixMilli()
	_, err := db.Exec(fmt.Sprintf(`INSERT INTO mediagen_events (seq, body, created) VALUES (%d, '%s', %d)`, seq, body, created))
	require.NoError(t, err)
	if e.dialect == mediagen.PostgreSQL {
		_, err = db.Exec(`SELECT setval(pg_get_serial_sequence('mediagen_events', 'seq'), (SELECT max(seq) FROM mediagen_events))`)
		require.NoError(t, err)
	}
}

func genEvent(id string, status mediagen.GenerationStatus) *webhook.Event {
	return &webhook.Event{Name: webhook.EventName("generation." + string(status)),
		Generation: &mediagen.Generation{ID: id, Status: status, Kind: mediagen.KindImage}}
}

func genBody(id string) string {
	b, _ := json.Marshal(exchangedEvent{Event: webhook.EventGenerationDone, Generation: &mediagen.Generation{ID: id, Status: mediagen.GenerationStatusDone}})
	return string(b)
}

func ids(evs []*webhook.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Generation != nil {
			out = append(out, ev.Generation.ID)
		} else {
			out = append(out, ev.Voice.ID)
		}
	}
	return out
}

// Generation and voice events come back as published, in order, and the
// cursor gives only what came after it.
func TestSQLExchangeRoundTrip(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e xEngine, dsn string) {
		ctx := t.Context()
		x := e.exchange(t, e.open(t, dsn))

		// As the service sent it: Raw is stored as is, fields this SDK does
		// not know included.
		raw := `{"event":"generation.done","generation":{"id":"gen_1","status":"done","kind":"image","output":{"image":"https://x/1.png","mime":"image/png"}},"deliveryId":"d1"}`
		header := http.Header{}
		webhook.SetHeaders(header, []string{"whsec_test"}, time.Now(), []byte(raw))
		ev, err := webhook.Parse([]byte(raw), header, "whsec_test")
		require.NoError(t, err)
		require.NoError(t, x.Publish(ctx, ev))
		// Built in code: its name and body as JSON.
		require.NoError(t, x.Publish(ctx, &webhook.Event{Name: webhook.EventVoiceError,
			Voice: &mediagen.Voice{ID: "voice_1", Name: "Ava", Status: mediagen.VoiceStatusError, Error: "too short"}}))
		require.NoError(t, x.Publish(ctx, genEvent("gen_2", mediagen.GenerationStatusTimeout)))

		evs, cursor, err := x.Since(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, []string{"gen_1", "voice_1", "gen_2"}, ids(evs))
		assert.Equal(t, webhook.EventGenerationDone, evs[0].Name)
		assert.Equal(t, "https://x/1.png", evs[0].Generation.Output.Image)
		assert.JSONEq(t, raw, string(evs[0].Raw))
		assert.Equal(t, webhook.EventVoiceError, evs[1].Name)
		assert.Nil(t, evs[1].Generation)
		assert.Equal(t, mediagen.Voice{ID: "voice_1", Name: "Ava", Status: mediagen.VoiceStatusError, Error: "too short"}, *evs[1].Voice)
		assert.Equal(t, mediagen.GenerationStatusTimeout, evs[2].Generation.Status)
		assert.EqualValues(t, 3, cursor)

		evs, same, err := x.Since(ctx, cursor)
		require.NoError(t, err)
		assert.Empty(t, evs)
		assert.Equal(t, cursor, same)
		require.NoError(t, x.Publish(ctx, genEvent("gen_3", mediagen.GenerationStatusDone)))
		evs, cursor, err = x.Since(ctx, cursor)
		require.NoError(t, err)
		assert.Equal(t, []string{"gen_3"}, ids(evs))
		assert.EqualValues(t, 4, cursor)

		// Another exchange on the table (a replica starting) reads them all.
		evs, _, err = e.exchange(t, e.open(t, dsn)).Since(ctx, 0)
		require.NoError(t, err)
		assert.Equal(t, []string{"gen_1", "voice_1", "gen_2", "gen_3"}, ids(evs))

		// What cannot be shared is refused; a row that is not an event is
		// passed over.
		assert.ErrorContains(t, x.Publish(ctx, nil), "nil event")
		assert.ErrorContains(t, x.Publish(ctx, &webhook.Event{Name: "generation.done"}), "neither")
		_, _, err = x.Since(ctx, -1)
		assert.ErrorContains(t, err, "negative cursor")
		e.plant(t, x.db, 5, 0, `not json`)
		require.NoError(t, x.Publish(ctx, genEvent("gen_6", mediagen.GenerationStatusDone)))
		evs, cursor, err = x.Since(ctx, 4)
		require.NoError(t, err)
		assert.Equal(t, []string{"gen_6"}, ids(evs))
		assert.EqualValues(t, 6, cursor)
	})
}

// A hub's first read starts from the events of the retention period; older
// ones are not read even before cleanup deleted them.
func TestSQLExchangeStartsWithinRetention(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e xEngine, dsn string) {
		x := e.exchange(t, e.open(t, dsn), WithExchangeRetention(time.Minute))
		e.plant(t, x.db, 1, 2*time.Minute, genBody("gen_old"))
		e.plant(t, x.db, 2, 30*time.Second, genBody("gen_recent"))
		evs, cursor, err := x.Since(t.Context(), 0)
		require.NoError(t, err)
		assert.Equal(t, []string{"gen_recent"}, ids(evs))
		assert.EqualValues(t, 2, cursor)
	})
}

// The cursor never passes a hole in the sequence that may still fill: the
// rows above it are returned (and again at the next read), and the cursor
// moves past it once the row above it is older than the settle window.
func TestSQLExchangeHoles(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e xEngine, dsn string) {
		ctx := t.Context()
		x := e.exchange(t, e.open(t, dsn))
		e.plant(t, x.db, 1, time.Second, genBody("gen_1"))
		e.plant(t, x.db, 3, 0, genBody("gen_3")) // 2 is on its way
		evs, cursor, err := x.Since(ctx, 0)
		require.NoError(t, err)
		assert.Equal(t, []string{"gen_1", "gen_3"}, ids(evs), "the row above the hole is not held back")
		assert.EqualValues(t, 1, cursor, "the cursor stays below the hole")
		e.plant(t, x.db, 2, 0, genBody("gen_2"))
		evs, cursor, err = x.Since(ctx, cursor)
		require.NoError(t, err)
		assert.Equal(t, []string{"gen_2", "gen_3"}, ids(evs), "the late row is found; the other comes again")
		assert.EqualValues(t, 3, cursor)

		// A hole that stays open longer than the settle window is passed.
		e.plant(t, x.db, 5, exchangeSettle+time.Second, genBody("gen_5"))
		e.plant(t, x.db, 7, 0, genBody("gen_7"))
		evs, cursor, err = x.Since(ctx, cursor)
		require.NoError(t, err)
		assert.Equal(t, []string{"gen_5", "gen_7"}, ids(evs))
		assert.EqualValues(t, 5, cursor)
	})
}

// On PostgreSQL a sequence value becomes visible when its transaction
// commits: the second insert commits first, and the first still arrives.
func TestSQLExchangeOutOfOrderCommit(t *testing.T) {
	e := xEngines[1]
	db := e.open(t, e.database(t))
	ctx := t.Context()
	x := e.exchange(t, db)
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, x.insert, genBody("gen_slow"))
	require.NoError(t, err)
	require.NoError(t, x.Publish(ctx, genEvent("gen_fast", mediagen.GenerationStatusDone)))
	evs, cursor, err := x.Since(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"gen_fast"}, ids(evs))
	assert.Zero(t, cursor, "seq 1 is not committed yet")
	require.NoError(t, tx.Commit())
	evs, cursor, err = x.Since(ctx, cursor)
	require.NoError(t, err)
	assert.Equal(t, []string{"gen_slow", "gen_fast"}, ids(evs))
	assert.EqualValues(t, 2, cursor)
}

// Rows older than the retention are deleted in batches, by Cleanup or by
// Publish at most once a minute; newer ones stay.
func TestSQLExchangeRetention(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e xEngine, dsn string) {
		ctx := t.Context()
		db := e.open(t, dsn)
		x := e.exchange(t, db, WithExchangeRetention(time.Minute))
		count := func() (n int) {
			require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM mediagen_events`).Scan(&n))
			return n
		}
		old := exchangeCleanupBatch*2 + 500
		tx, err := db.Begin()
		require.NoError(t, err)
		stmt, err := tx.Prepare(x.dialect.Rebind(`INSERT INTO mediagen_events (body, created) VALUES (?, ?)`))
		require.NoError(t, err)
		for i := range old {
			_, err := stmt.Exec(genBody(fmt.Sprint("gen_old_", i)), time.Now().Add(-2*time.Minute).UnixMilli())
			require.NoError(t, err)
		}
		require.NoError(t, tx.Commit())
		require.NoError(t, x.Publish(ctx, genEvent("gen_new", mediagen.GenerationStatusDone)))
		x.cleaning.Wait()
		assert.Equal(t, old+1, count(), "no cleanup in the first minute")

		n, err := x.Cleanup(ctx)
		require.NoError(t, err)
		assert.EqualValues(t, old, n)
		assert.Equal(t, 1, count())

		// Publish starts one when a minute has passed, in the background.
		e.plant(t, db, 100, 2*time.Minute, genBody("gen_old_again"))
		x.nextCleanup.Store(time.Now().UnixNano())
		require.NoError(t, x.Publish(ctx, genEvent("gen_newer", mediagen.GenerationStatusDone)))
		x.cleaning.Wait()
		evs, _, err := e.exchange(t, db).Since(ctx, 0)
		require.NoError(t, err)
		assert.Equal(t, []string{"gen_new", "gen_newer"}, ids(evs))
		assert.Equal(t, 2, count())
		assert.Greater(t, x.nextCleanup.Load(), time.Now().Add(50*time.Second).UnixNano(), "the next in a minute")
	})
}

// Bad arguments and options are all reported; a custom table is used; many
// replicas creating the table at once all succeed.
func TestOpenSQLExchange(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(t, err)
	defer db.Close()
	ctx := t.Context()
	_, err = OpenSQLExchange(ctx, nil, 0, WithExchangeTable("a-b"), WithExchangeRetention(0))
	require.Error(t, err)
	for _, want := range []string{"nil *sql.DB", "unknown dialect", `WithExchangeTable("a-b")`, "WithExchangeRetention(0s)"} {
		assert.ErrorContains(t, err, want)
	}
	for _, name := range []string{"", "1events", `x"; DROP TABLE y; --`, "public.events", strings.Repeat("e", 49)} {
		_, err := OpenSQLExchange(ctx, db, mediagen.SQLite, WithExchangeTable(name))
		assert.ErrorContains(t, err, "WithExchangeTable", name)
	}
	_, err = OpenSQLExchange(ctx, db, mediagen.SQLite, WithExchangeRetention(-time.Second))
	assert.ErrorContains(t, err, "positive")

	forEachEngine(t, func(t *testing.T, e xEngine, dsn string) {
		var wg sync.WaitGroup
		for range 8 {
			db := e.open(t, dsn)
			wg.Go(func() {
				_, err := OpenSQLExchange(t.Context(), db, e.dialect, WithExchangeTable("Select"), nil)
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		x := e.exchange(t, e.open(t, dsn), WithExchangeTable("Select"))
		require.NoError(t, x.Publish(t.Context(), genEvent("gen_1", mediagen.GenerationStatusDone)))
		var n int
		require.NoError(t, x.db.QueryRow(`SELECT COUNT(*) FROM "Select"`).Scan(&n))
		assert.Equal(t, 1, n)
	})
}

// On connections without a busy timeout SQLite answers SQLITE_BUSY at once
// while another connection holds the write lock: Publish and Cleanup go
// through mediagen.Dialect.Retry and succeed once the lock is let go.
func TestSQLExchangeRetriesBusySQLite(t *testing.T) {
	ctx := t.Context()
	dsn := "file:" + filepath.Join(t.TempDir(), "events.db") + "?_pragma=journal_mode(WAL)"
	e := xEngines[0]
	x := e.exchange(t, e.open(t, dsn))
	holder := e.open(t, dsn)
	lock := func() <-chan error {
		conn, err := holder.Conn(ctx)
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, `BEGIN EXCLUSIVE`)
		require.NoError(t, err)
		released := make(chan error, 1)
		time.AfterFunc(150*time.Millisecond, func() {
			_, err := conn.ExecContext(context.Background(), `COMMIT`)
			conn.Close()
			released <- err
		})
		return released
	}

	released := lock()
	start := time.Now()
	require.NoError(t, x.Publish(ctx, genEvent("gen_1", mediagen.GenerationStatusDone)))
	assert.GreaterOrEqual(t, time.Since(start), 75*time.Millisecond, "the insert waited for the lock")
	require.NoError(t, <-released)

	released = lock()
	_, err := x.Cleanup(ctx)
	require.NoError(t, err)
	require.NoError(t, <-released)
	evs, _, err := x.Since(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"gen_1"}, ids(evs))
}
