package poll

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // registers "sqlite", pure Go

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/internal/hubtest"
	"github.com/mediagen/mediagen-go/internal/pgtest"
	"github.com/mediagen/mediagen-go/webhook"
)

// hubEnv is a server on the wall clock delivering webhooks to a receiver
// that feeds a hub, and a counting client that asks for them.
func hubEnv(t *testing.T, h *hub.Hub) *env {
	t.Helper()
	e := newEnv(t, clienttest.WithWallClock())
	deliver, err := webhook.Handler(e.srv.WebhookSecret(), h.Deliver)
	require.NoError(t, err)
	recv := httptest.NewServer(deliver)
	t.Cleanup(recv.Close)
	e.c = e.srv.Client(client.WithHTTPClient(&http.Client{Transport: e.count}), client.WithWebhookURL(recv.URL))
	return e
}

// A verified terminal event ends the wait: no request beyond the create.
func TestHubEventEndsTheWait(t *testing.T) {
	h := newHub(t)
	e := hubEnv(t, h)
	ctx := t.Context()
	g := e.image(t)
	start := time.Now()
	got, err := Generation(ctx, e.c, g.ID, WithHub(h), WithKind(g.Kind))
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, got.Status)
	assert.NotEmpty(t, got.Output.Image, "the event carries the same body as a GET")
	assert.Zero(t, e.count.requests(), "no GET: the event ended the wait")
	assert.Less(t, time.Since(start), 5*time.Second)

	// Many at once, and a voice.
	ids := []string{e.image(t).ID, e.image(t).ID, e.image(t).ID}
	results, err := Generations(ctx, e.c, ids, WithHub(h), WithKind(mediagen.KindImage))
	require.NoError(t, err)
	for _, r := range results {
		assert.Equal(t, mediagen.GenerationStatusDone, r.Generation.Status)
	}
	assert.Zero(t, e.count.requests(), "no list, no GET")
}

// An event that arrived before the wait began ends it at once.
func TestHubRemembersEarlyEvents(t *testing.T) {
	h := newHub(t)
	e := newEnv(t)
	done := &mediagen.Generation{ID: "gen_early", Status: mediagen.GenerationStatusDone, Kind: mediagen.KindImage}
	require.NoError(t, h.Deliver(t.Context(), &webhook.Event{Name: webhook.EventGenerationDone, Generation: done}))
	got, err := Generation(t.Context(), e.c, "gen_early", WithHub(h), withClock(e.clock))
	require.NoError(t, err)
	assert.Same(t, done, got)
	assert.Zero(t, e.count.requests())
	assert.Empty(t, e.clock.waits())

	failed := &mediagen.Generation{ID: "gen_failed", Status: mediagen.GenerationStatusError, Error: "boom"}
	require.NoError(t, h.Deliver(t.Context(), &webhook.Event{Name: webhook.EventGenerationError, Generation: failed}))
	got, err = Generation(t.Context(), e.c, "gen_failed", WithHub(h), withClock(e.clock))
	var fe *FailedError
	require.ErrorAs(t, err, &fe)
	assert.Same(t, failed, got)
}

// Foreign and non-terminal events never end a wait; with every event lost
// the backstop finds the generation.
func TestHubBackstop(t *testing.T) {
	h := newHub(t)
	e := newEnv(t)
	ctx := t.Context()
	g := e.image(t)
	for _, ev := range []*webhook.Event{
		{Name: webhook.EventGenerationDone, Generation: &mediagen.Generation{ID: "gen_someone_else", Status: mediagen.GenerationStatusDone}},
		{Name: "generation.progress", Generation: &mediagen.Generation{ID: g.ID, Status: mediagen.GenerationStatusRunning}},
		{Name: webhook.EventVoiceDone, Voice: &mediagen.Voice{ID: g.ID, Status: mediagen.VoiceStatusDone}},
		nil,
	} {
		require.NoError(t, h.Deliver(ctx, ev))
	}
	got, err := Generation(ctx, e.c, g.ID, WithHub(h), WithKind(mediagen.KindImage), withClock(e.clock))
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, got.Status)
	assert.EqualValues(t, 1, e.count.requests(), "one backstop check")
	assert.Equal(t, []time.Duration{10 * time.Second}, e.clock.waits(), "the first check when an image is normally done")

	// An unknown kind waits as long as a video before its first check;
	// WithMaxWait still bounds the wait, its last check at the deadline.
	slow := newEnv(t, clienttest.WithRenderScale(1))
	v := slow.video(t)
	_, err = Generation(ctx, slow.c, v.ID, WithHub(h), withClock(slow.clock), WithMaxWait(30*time.Second))
	assert.ErrorIs(t, err, ErrMaxWait)
	assert.Equal(t, []time.Duration{30 * time.Second}, slow.clock.waits())
	assert.EqualValues(t, 1, slow.count.requests(), "the check at the deadline")

	// A generation that is gone says so.
	_, err = Generation(ctx, e.c, "gen_missing", WithHub(h), withClock(e.clock), WithKind(mediagen.KindImage))
	assert.ErrorIs(t, err, ErrGone)
}

// A hub answers deliveries without waiting for the waits it wakes, and many
// waits on one id all end.
func TestHubWakesEveryWaiter(t *testing.T) {
	h := newHub(t)
	e := newEnv(t, clienttest.WithWallClock())
	id := "gen_shared"
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			g, err := Generation(context.Background(), e.c, id, WithHub(h), WithKind(mediagen.KindImage))
			assert.NoError(t, err)
			assert.Equal(t, id, g.ID)
		})
	}
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	require.NoError(t, h.Deliver(t.Context(), &webhook.Event{Name: webhook.EventGenerationDone,
		Generation: &mediagen.Generation{ID: id, Status: mediagen.GenerationStatusDone}}))
	assert.Less(t, time.Since(start), 10*time.Millisecond, "Deliver does not wait for the waits")
	wg.Wait()
	assert.Zero(t, e.count.requests())
}

// The webhook lands on one replica's hub; a wait on another's ends.
func TestHubExchangeAcrossReplicas(t *testing.T) {
	x := &hubtest.Exchange{}
	receiver := newHub(t, hub.WithExchange(x, 10*time.Millisecond, nil))
	waiter := newHub(t, hub.WithExchange(x, 10*time.Millisecond, nil))
	t.Cleanup(func() { receiver.Close(); waiter.Close() })
	e := newEnv(t, clienttest.WithWallClock())
	done := make(chan *mediagen.Generation)
	go func() {
		g, err := Generation(context.Background(), e.c, "gen_x", WithHub(waiter), WithKind(mediagen.KindImage))
		assert.NoError(t, err)
		done <- g
	}()
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	require.NoError(t, receiver.Deliver(t.Context(), &webhook.Event{Name: webhook.EventGenerationDone,
		Generation: &mediagen.Generation{ID: "gen_x", Status: mediagen.GenerationStatusDone}}))
	select {
	case g := <-done:
		assert.Equal(t, "gen_x", g.ID)
		assert.Less(t, time.Since(start), 250*time.Millisecond)
	case <-time.After(5 * time.Second):
		t.Fatal("the wait on the other replica did not end")
	}
	assert.Zero(t, e.count.requests())
	require.NoError(t, waiter.Close())
	require.NoError(t, waiter.Close(), "twice is fine")
}

// newHub returns a hub with opts, closed when the test ends.
func newHub(t *testing.T, opts ...hub.Option) *hub.Hub {
	t.Helper()
	h, err := hub.New(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	return h
}

// Two hubs on a real hub.SQLExchange, as two replicas: the event delivered to
// one ends a wait on the other within 250 ms, and a hub started later
// still finds it.
func TestSQLExchangeBetweenHubs(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e sqlEngine, dsn string) {
		a := newHub(t, hub.WithExchange(e.exchange(t, e.open(t, dsn)), 0, func(err error) { t.Error(err) }))
		b := newHub(t, hub.WithExchange(e.exchange(t, e.open(t, dsn)), 0, func(err error) { t.Error(err) }))
		env := newEnv(t, clienttest.WithWallClock())
		done := make(chan *mediagen.Generation)
		voiced := make(chan *mediagen.Voice)
		go func() {
			g, err := Generation(context.Background(), env.c, "gen_x", WithHub(b), WithKind(mediagen.KindImage))
			assert.NoError(t, err)
			done <- g
		}()
		go func() {
			v, err := Voice(context.Background(), env.c, "voice_x", WithHub(b))
			assert.NoError(t, err)
			voiced <- v
		}()
		time.Sleep(150 * time.Millisecond)
		start := time.Now()
		require.NoError(t, a.Deliver(t.Context(), &webhook.Event{Name: webhook.EventGenerationDone,
			Generation: &mediagen.Generation{ID: "gen_x", Status: mediagen.GenerationStatusDone, Kind: mediagen.KindImage}}))
		require.NoError(t, a.Deliver(t.Context(), &webhook.Event{Name: webhook.EventVoiceDone,
			Voice: &mediagen.Voice{ID: "voice_x", Status: mediagen.VoiceStatusDone}}))
		for range 2 {
			select {
			case g := <-done:
				assert.Equal(t, "gen_x", g.ID)
				assert.Less(t, time.Since(start), 250*time.Millisecond)
			case v := <-voiced:
				assert.Equal(t, "voice_x", v.ID)
				assert.Less(t, time.Since(start), 250*time.Millisecond)
			case <-time.After(5 * time.Second):
				t.Fatal("the wait on the other replica did not end")
			}
		}
		assert.Zero(t, env.count.requests())

		// A replica that starts after the event finds it.
		c := newHub(t, hub.WithExchange(e.exchange(t, e.open(t, dsn)), 0, nil))
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		g, err := Generation(ctx, env.c, "gen_x", WithHub(c), WithKind(mediagen.KindImage))
		require.NoError(t, err)
		assert.Equal(t, mediagen.GenerationStatusDone, g.Status)
		assert.Zero(t, env.count.requests())
	})
}

// sqlEngine is a database a shared exchange is tested on: a real server or
// file, never a mock.
type sqlEngine struct {
	name, driver string
	dialect      mediagen.Dialect
	database     func(testing.TB) string // the DSN of a new, empty database
}

// forEachEngine runs fn on each engine with a new, empty database.
func forEachEngine(t *testing.T, fn func(t *testing.T, e sqlEngine, dsn string)) {
	for _, e := range []sqlEngine{
		{"SQLite", "sqlite", mediagen.SQLite, func(tb testing.TB) string {
			return "file:" + filepath.Join(tb.TempDir(), "events.db") + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)"
		}},
		{"PostgreSQL", "pgx", mediagen.PostgreSQL, pgtest.DSN},
	} {
		t.Run(e.name, func(t *testing.T) { fn(t, e, e.database(t)) })
	}
}

func (e sqlEngine) open(tb testing.TB, dsn string) *sql.DB {
	tb.Helper()
	db, err := sql.Open(e.driver, dsn)
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	return db
}

func (e sqlEngine) exchange(tb testing.TB, db *sql.DB) *hub.SQLExchange {
	tb.Helper()
	x, err := hub.OpenSQLExchange(context.Background(), db, e.dialect)
	require.NoError(tb, err)
	return x
}

// A wait fed by a hub sleeps on its watch, which the hub ends: no
// goroutine per sleep beside the waits' own.
func TestHubSleepStartsNoGoroutine(t *testing.T) {
	h := newHub(t)
	e := newEnv(t, clienttest.WithWallClock())
	const waits = 50
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for i := range waits {
		id := fmt.Sprintf("gen_%d", i)
		wg.Go(func() {
			g, err := Generation(t.Context(), e.c, id, WithHub(h), WithKind(mediagen.KindImage))
			assert.NoError(t, err)
			assert.Equal(t, id, g.ID)
		})
	}
	time.Sleep(100 * time.Millisecond) // every wait asleep
	assert.LessOrEqual(t, runtime.NumGoroutine()-before, waits+5, "one goroutine per wait, its own")
	for i := range waits {
		require.NoError(t, h.Deliver(t.Context(), &webhook.Event{Name: webhook.EventGenerationDone,
			Generation: &mediagen.Generation{ID: fmt.Sprintf("gen_%d", i), Status: mediagen.GenerationStatusDone}}))
	}
	wg.Wait()
	assert.Zero(t, e.count.requests())
}
