package webhook_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // registers "sqlite", pure Go

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/webhook"
)

var _ webhook.Store = (*webhook.SQLStore)(nil)

// engine is a database the SQL store is tested on: a real server or file,
// never a mock.
type engine struct {
	name    string
	dialect mediagen.Dialect
	driver  string
	// database returns the DSN of a new, empty database; every *sql.DB opened
	// on it sees the same rows, as replicas of a receiver would.
	database func(testing.TB) string
}

var engines = []engine{
	{name: "SQLite", dialect: mediagen.SQLite, driver: "sqlite", database: sqliteDSN},
	{name: "PostgreSQL", dialect: mediagen.PostgreSQL, driver: "pgx", database: postgresDSN},
}

// sqliteDSN is a database file of its own; the busy timeout makes writers
// on other connections wait for the lock instead of failing. In WAL mode,
// synchronous NORMAL skips the flush at each commit (a commit survives the
// process crashing, not the machine), unless durableEnv is set.
func sqliteDSN(tb testing.TB) string {
	path := filepath.Join(tb.TempDir(), "deliveries.db")
	flush := "NORMAL"
	if os.Getenv(durableEnv) != "" {
		flush = "FULL"
	}
	return "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(" + flush + ")"
}

func (e engine) open(tb testing.TB, dsn string) *sql.DB {
	tb.Helper()
	db, err := sql.Open(e.driver, dsn)
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16) // a new PostgreSQL connection is a new server process
	return db
}

func (e engine) store(tb testing.TB, db *sql.DB, opts ...webhook.SQLOption) *webhook.SQLStore {
	tb.Helper()
	// No cleanup in the background unless asked for: it would race the test's end.
	base := []webhook.SQLOption{webhook.WithCleanupInterval(0)}
	s, err := webhook.OpenSQLStore(context.Background(), db, e.dialect, append(base, opts...)...)
	require.NoError(tb, err)
	return s
}

// plant inserts rows as if claimed at the given time, as a replica whose
// clock said so would have.
func plant(t *testing.T, db *sql.DB, table string, at time.Time, ids ...string) {
	t.Helper()
	for _, id := range ids {
		_, err := db.Exec(fmt.Sprintf(`INSERT INTO %s (id, claimed_at) VALUES ('%s', %d)`, table, id, at.Unix()))
		require.NoError(t, err)
	}
}

func countRows(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM `+table).Scan(&n))
	return n
}

func TestOpenSQLStoreRefusesBadOptions(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(t, err)
	defer db.Close()
	sqlite := mediagen.SQLite

	tests := []struct {
		name    string
		db      *sql.DB
		dialect mediagen.Dialect
		opts    []webhook.SQLOption
		want    string
	}{
		{"no dialect", db, 0, nil, "Dialect(0)"},
		{"unknown dialect", db, 7, nil, "Dialect(7)"},
		{"nil db", nil, sqlite, nil, "nil *sql.DB"},
		{"empty table", db, sqlite, []webhook.SQLOption{webhook.WithTable("")}, `WithTable("")`},
		{"quote in table", db, sqlite, []webhook.SQLOption{webhook.WithTable(`x"; DROP TABLE y; --`)}, "WithTable"},
		{"dot in table", db, sqlite, []webhook.SQLOption{webhook.WithTable("public.hooks")}, "WithTable"},
		{"leading digit", db, sqlite, []webhook.SQLOption{webhook.WithTable("1hooks")}, "WithTable"},
		{"long table", db, sqlite, []webhook.SQLOption{webhook.WithTable(string(bytes.Repeat([]byte("a"), 49)))}, "at most 48"},
		{"zero retention", db, sqlite, []webhook.SQLOption{webhook.WithRetention(0)}, "WithRetention"},
		{"zero batch", db, sqlite, []webhook.SQLOption{webhook.WithCleanupBatch(0)}, "WithCleanupBatch"},
		{"negative interval", db, sqlite, []webhook.SQLOption{webhook.WithCleanupInterval(-time.Second)}, "WithCleanupInterval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := webhook.OpenSQLStore(t.Context(), tt.db, tt.dialect, tt.opts...)
			assert.Nil(t, s)
			require.ErrorIs(t, err, webhook.ErrInvalidOption)
			assert.ErrorContains(t, err, tt.want)
		})
	}

	// Every mistake is reported, each wrapping ErrInvalidOption.
	_, err = webhook.OpenSQLStore(t.Context(), nil, 7, webhook.WithTable("1st"), nil, webhook.WithRetention(0))
	joined, ok := err.(interface{ Unwrap() []error })
	require.True(t, ok, "the errors are joined: %v", err)
	require.Len(t, joined.Unwrap(), 4, "each is reported: %v", err)
	for _, part := range joined.Unwrap() {
		assert.ErrorIs(t, part, webhook.ErrInvalidOption)
	}

	s, err := webhook.OpenSQLStore(t.Context(), db, sqlite, webhook.WithTable("Hooks_2"), webhook.WithCleanupInterval(0), nil)
	require.NoError(t, err)
	assert.NotNil(t, s)
}

func TestSQLStore(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Run("ClaimAndRelease", func(t *testing.T) { testClaimAndRelease(t, e) })
			t.Run("ConcurrentClaims", func(t *testing.T) { testConcurrentClaims(t, e) })
			t.Run("Cleanup", func(t *testing.T) { testCleanup(t, e) })
			t.Run("BackgroundCleanup", func(t *testing.T) { testBackgroundCleanup(t, e) })
			t.Run("ClaimHonoursDeadline", func(t *testing.T) { testClaimHonoursDeadline(t, e) })
			t.Run("TwoReplicas", func(t *testing.T) { testTwoReplicas(t, e) })
		})
	}
}

func testClaimAndRelease(t *testing.T, e engine) {
	db := e.open(t, e.database(t))
	// A reserved word in mixed case: the name is quoted as given.
	s := e.store(t, db, webhook.WithTable("Order"))
	e.store(t, db, webhook.WithTable("Order")) // opening it again is fine

	assert.True(t, claim(t, s, "a"))
	assert.False(t, claim(t, s, "a"), "a repeat is not fresh")
	assert.True(t, claim(t, s, "b"))
	assert.Equal(t, 2, countRows(t, db, `"Order"`))

	require.NoError(t, s.Release(context.Background(), "a"))
	assert.True(t, claim(t, s, "a"), "a released id is taken again")
	require.NoError(t, s.Release(context.Background(), "never-claimed"))
	assert.Equal(t, 2, countRows(t, db, `"Order"`))

	long := string(bytes.Repeat([]byte("é"), 2000))
	assert.True(t, claim(t, s, long), "ids are not cut short")
	assert.True(t, claim(t, s, long[:len(long)-2]))
	assert.False(t, claim(t, s, long))

	other := e.store(t, db) // another table in the same database
	assert.True(t, claim(t, other, "a"))

	unmade := e.store(t, db, webhook.WithTable("dropped"))
	_, err := db.Exec(`DROP TABLE dropped`)
	require.NoError(t, err)
	_, err = unmade.Claim(context.Background(), "x")
	assert.ErrorContains(t, err, "webhook: SQL store claim", "a missing table is an error, not a fresh delivery")
}

func testConcurrentClaims(t *testing.T, e engine) {
	dsn := e.database(t)
	stores := []*webhook.SQLStore{e.store(t, e.open(t, dsn)), e.store(t, e.open(t, dsn))}
	for round := range 20 {
		id := fmt.Sprintf("same-%d", round)
		var wins atomic.Int32
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				fresh, err := stores[i%2].Claim(context.Background(), id)
				assert.NoError(t, err)
				if fresh {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		require.Equal(t, int32(1), wins.Load(), "claims of %s", id)
	}
}

func testCleanup(t *testing.T, e engine) {
	db := e.open(t, e.database(t))
	s := e.store(t, db, webhook.WithCleanupBatch(7))
	now := time.Now()
	var old, young []string
	for i := range 30 {
		old = append(old, fmt.Sprintf("old-%d", i))
	}
	for i := range 5 {
		young = append(young, fmt.Sprintf("young-%d", i))
	}
	plant(t, db, webhook.DefaultTable, now.Add(-webhook.DefaultRetention-time.Minute), old...)
	plant(t, db, webhook.DefaultTable, now.Add(-webhook.DefaultRetention+time.Minute), young...)
	assert.True(t, claim(t, s, "new"))

	n, err := s.Cleanup(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(30), n, "all old rows, over several batches of 7")
	assert.Equal(t, 6, countRows(t, db, webhook.DefaultTable))
	for _, id := range append(young, "new") {
		assert.False(t, claim(t, s, id), "%s is within the retention", id)
	}
	assert.True(t, claim(t, s, old[0]), "an old id is forgotten")

	n, err = s.Cleanup(context.Background())
	require.NoError(t, err)
	assert.Zero(t, n)

	short := e.store(t, db, webhook.WithRetention(time.Hour))
	n, err = short.Cleanup(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(5), n, "with a retention of an hour the young rows are old")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.Cleanup(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

func testBackgroundCleanup(t *testing.T, e engine) {
	const every = 500 * time.Millisecond
	db := e.open(t, e.database(t))
	s := e.store(t, db, webhook.WithCleanupBatch(3), webhook.WithCleanupInterval(every))
	made := time.Now()
	old := time.Now().Add(-webhook.DefaultRetention - time.Hour)
	plant(t, db, webhook.DefaultTable, old, "o1", "o2", "o3", "o4", "o5")
	assert.True(t, claim(t, s, "early"))
	if time.Since(made) < every/2 {
		time.Sleep(50 * time.Millisecond)
		assert.Equal(t, 6, countRows(t, db, webhook.DefaultTable), "no cleanup before the first interval")
	}

	time.Sleep(time.Until(made.Add(every)))
	assert.True(t, claim(t, s, "due"), "this claim starts a cleanup")
	started := time.Now()
	assert.Eventually(t, func() bool { return countRows(t, db, webhook.DefaultTable) == 2 }, 10*time.Second, 5*time.Millisecond)

	plant(t, db, webhook.DefaultTable, old, "o6")
	assert.True(t, claim(t, s, "soon"))
	time.Sleep(50 * time.Millisecond)
	if time.Since(started) < every {
		assert.Equal(t, 4, countRows(t, db, webhook.DefaultTable), "no second cleanup within the interval")
	}
}

// A claim stuck behind another transaction's lock gives up when its context
// ends, and Handler then answers 500 within its acknowledgement time.
func testClaimHonoursDeadline(t *testing.T, e engine) {
	dsn := e.database(t)
	db := e.open(t, dsn)
	s := e.store(t, db)

	holder := e.open(t, dsn)
	tx, err := holder.Begin()
	require.NoError(t, err)
	defer tx.Rollback()
	// Both engines make a second writer of this id wait: PostgreSQL for the
	// row, SQLite for the database's write lock.
	_, err = tx.Exec(`INSERT INTO ` + webhook.DefaultTable + ` (id, claimed_at) VALUES ('generation.done generation gen_held', 0)`)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = s.Claim(ctx, "generation.done generation gen_held")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 2*time.Second)

	c, rep := &counter{}, &reported{}
	h := newHandler(t, c, rep, webhook.WithStore(s), webhook.WithAckTimeout(300*time.Millisecond))
	start = time.Now()
	rec := serve(h, delivery(generationBody(webhook.EventGenerationDone, "gen_held"), handlerNow, handlerSecret))
	assert.Equal(t, http.StatusInternalServerError, rec.Code, "the service will resend")
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Zero(t, c.calls())
	errs, _ := rep.all()
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], context.DeadlineExceeded)

	require.NoError(t, tx.Rollback())
	rec = serve(h, delivery(generationBody(webhook.EventGenerationDone, "gen_held"), handlerNow, handlerSecret))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, 1, c.calls(), "once the lock is gone the resend is taken")
}

var errFirstAttempt = errors.New("planned failure of a first attempt")

// testTwoReplicas runs two receivers, each a Handler with its own store and
// connection pool over one database, as replicas behind a load balancer.
// Every event is delivered twice at once, to the same or the other replica;
// some callbacks fail the first time and the delivery is resent, as the
// service does once after a failure. Each event's callback must complete
// exactly once, and none may be lost.
func testTwoReplicas(t *testing.T, e engine) {
	const events = 1000
	dsn := e.database(t)
	dbs := []*sql.DB{e.open(t, dsn), e.open(t, dsn)}
	stores := make([]*webhook.SQLStore, 2)
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() {
			s, err := webhook.OpenSQLStore(context.Background(), dbs[i], e.dialect)
			assert.NoError(t, err, "replicas create the table at once")
			stores[i] = s
		})
	}
	wg.Wait()
	require.NotContains(t, stores, (*webhook.SQLStore)(nil))

	var (
		mu        sync.Mutex
		attempts  = map[string]int{}
		completed = map[string]int{}
		running   = map[string]int{}
		overlaps  int
		storeErrs []error
	)
	failsFirst := func(id string) bool { return id[len(id)-1] == '7' } // one event in ten
	callback := func(ctx context.Context, ev *webhook.Event) error {
		id := ev.Generation.ID
		mu.Lock()
		attempts[id]++
		first := attempts[id] == 1
		running[id]++
		if running[id] > 1 {
			overlaps++
		}
		mu.Unlock()
		defer func() {
			mu.Lock()
			running[id]--
			mu.Unlock()
		}()
		// Long enough for the other copy to arrive while this one runs.
		time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
		if first && failsFirst(id) {
			return errFirstAttempt
		}
		mu.Lock()
		completed[id]++
		mu.Unlock()
		return nil
	}
	onError := webhook.WithErrorFunc(func(_ context.Context, _ *webhook.Event, err error) {
		if !errors.Is(err, errFirstAttempt) {
			mu.Lock()
			storeErrs = append(storeErrs, err)
			mu.Unlock()
		}
	})
	var urls []string
	for _, s := range stores {
		srv := httptest.NewServer(handlerOf(t, handlerSecret, callback, webhook.WithStore(s), onError))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(httpClient.CloseIdleConnections)

	post := func(url string, body []byte) (int, error) {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		webhook.SetHeaders(req.Header, []string{handlerSecret}, time.Now(), body)
		resp, err := httpClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	var answered500, undelivered atomic.Int32
	// deliver is the service: one send, and one resend to either replica
	// when the answer is not a 2xx.
	deliver := func(first int, body []byte) {
		status, err := post(urls[first], body)
		if err == nil && status/100 == 2 {
			return
		}
		if status == http.StatusInternalServerError {
			answered500.Add(1)
		}
		time.Sleep(5 * time.Millisecond) // the service waits 2 s
		status, err = post(urls[rand.IntN(2)], body)
		if err != nil || status/100 != 2 {
			undelivered.Add(1)
			t.Errorf("resend answered %d, %v", status, err)
		}
	}

	start := time.Now()
	sem := make(chan struct{}, 24)
	for i := range events {
		body := generationBody(webhook.EventGenerationDone, fmt.Sprintf("gen_%04d", i))
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var copies sync.WaitGroup
			copies.Go(func() { deliver(i%2, body) })
			copies.Go(func() { deliver(rand.IntN(2), body) })
			copies.Wait()
		})
	}
	wg.Wait()
	t.Logf("%s: %d events, each delivered twice, in %v", e.name, events, time.Since(start))

	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, storeErrs)
	assert.Zero(t, overlaps, "a callback ran while another of the same event was running")
	assert.Zero(t, undelivered.Load())
	var twice, never, planned int
	for i := range events {
		id := fmt.Sprintf("gen_%04d", i)
		switch completed[id] {
		case 0:
			never++
		case 1:
		default:
			twice++
		}
		if failsFirst(id) {
			planned++
			assert.Equal(t, 2, attempts[id], "%s failed once, then ran once more", id)
		}
	}
	assert.Zero(t, twice, "events whose callback completed more than once")
	assert.Zero(t, never, "events lost")
	assert.Len(t, completed, events)
	assert.Equal(t, int32(planned), answered500.Load(), "only the planned failures were answered 500")

	// Retention: rows from two days ago go, the run's rows stay.
	plant(t, dbs[0], webhook.DefaultTable, time.Now().Add(-webhook.DefaultRetention-time.Minute), "stale-1", "stale-2", "stale-3")
	cleaner, err := webhook.OpenSQLStore(context.Background(), dbs[1], e.dialect, webhook.WithCleanupBatch(2))
	require.NoError(t, err)
	n, err := cleaner.Cleanup(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)
	assert.Equal(t, events, countRows(t, dbs[0], webhook.DefaultTable))
}
