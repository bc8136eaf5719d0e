package riverjob_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/client/journal"
	riverjob "github.com/mediagen/mediagen-go/river"
)

// On one machine, River's SQLite driver serves: jobs complete, charged once.
func TestSQLite(t *testing.T) {
	ctx := t.Context()
	srv := clienttest.NewServer(t, clienttest.WithWallClock())
	db := openSQLite(t, filepath.Join(t.TempDir(), "queue.db"))
	store, err := riverjob.Open(ctx, db, mediagen.SQLite)
	require.NoError(t, err)
	require.NoError(t, store.SetBudget(ctx, river.QueueDefault, 10))
	rc := workSQLite(t, db, store, srv)

	for i := range 4 {
		ja, err := riverjob.NewArgs("s"+string(rune('a'+i)), client.ImageGenerationArgs{Prompt: "a kite"})
		require.NoError(t, err)
		_, err = rc.Insert(ctx, ja, nil)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		p, err := store.Progress(ctx, river.QueueDefault)
		return err == nil && p.Done == 4
	}, 30*time.Second, 50*time.Millisecond)
	res, err := rc.JobList(ctx, river.NewJobListParams().States(rivertype.JobStateCompleted))
	require.NoError(t, err)
	spent := 0.0
	for _, j := range res.Jobs {
		var r riverjob.Result
		require.NoError(t, json.Unmarshal(j.Output(), &r))
		assert.FileExists(t, r.Path)
		spent += r.Generation.BalanceUsed
	}
	b, _, err := store.Budget(ctx, river.QueueDefault)
	require.NoError(t, err)
	assert.InDelta(t, spent, b.Spent, 1e-6)
	assert.InDelta(t, clienttest.Balance-spent, srv.Balance(), 1e-6)
}

// On SQLite, the tables an earlier version created, without the columns
// added since, gain them when two processes open the store at once, and a
// job then completes with its result and its reservation recorded.
func TestSQLiteUpgradesOldTable(t *testing.T) {
	ctx := t.Context()
	srv := clienttest.NewServer(t, clienttest.WithWallClock())
	path := filepath.Join(t.TempDir(), "queue.db")
	db := openSQLite(t, path)
	_, err := db.ExecContext(ctx, oldTables)
	require.NoError(t, err)
	store := openTwice(t, mediagen.SQLite, func() *sql.DB { return openSQLite(t, path) })
	require.NoError(t, store.SetBudget(ctx, river.QueueDefault, 10))
	rc := workSQLite(t, db, store, srv)

	ja, err := riverjob.NewArgs("k000", client.ImageGenerationArgs{Prompt: "k000 a kite"})
	require.NoError(t, err)
	ins, err := rc.Insert(ctx, ja, nil)
	require.NoError(t, err)
	var job *rivertype.JobRow
	require.Eventually(t, func() bool {
		job, err = rc.JobGet(ctx, ins.Job.ID)
		return err == nil && job.State == rivertype.JobStateCompleted
	}, 30*time.Second, 50*time.Millisecond)
	assertResultRecorded(t, db, job)
}

// On SQLite, a job cancelled while it snoozes after sending keeps its
// estimate spent and nothing held; see TestCancelledWhileSnoozedStaysSpent.
func TestSQLiteCancelledWhileSnoozed(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.WithWallClock())
	db := openSQLite(t, filepath.Join(t.TempDir(), "queue.db"))
	store, err := riverjob.Open(t.Context(), db, mediagen.SQLite)
	require.NoError(t, err)
	rc := workSQLite(t, db, store, srv)
	cancelWhileSnoozed(t, rc, store, srv, func(id int64) {
		_, err := rc.JobCancel(t.Context(), id)
		require.NoError(t, err)
		waitState(t, rc, id, rivertype.JobStateCancelled)
	})
}

// openSQLite opens the SQLite database at path as River's SQLite driver
// wants it: WAL, a busy timeout and one connection.
func openSQLite(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// workSQLite adds River's tables to db and starts a River client working
// its default queue with a worker of srv on store, saving to a folder of
// the test, until the test ends.
func workSQLite(t *testing.T, db *sql.DB, store *riverjob.Store, srv *clienttest.Server) *river.Client[*sql.Tx] {
	t.Helper()
	driver := riversqlite.New(db)
	migrator, err := rivermigrate.New(driver, nil)
	require.NoError(t, err)
	_, err = migrator.Migrate(t.Context(), rivermigrate.DirectionUp, nil)
	require.NoError(t, err)
	w, err := riverjob.NewWorker(srv.MustClient(client.WithJournal(store.Journal())), store, riverjob.WithSaveTo(t.TempDir()))
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	rc, err := river.NewClient(driver, &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
		Workers:           workers,
		FetchPollInterval: 100 * time.Millisecond,
	})
	require.NoError(t, err)
	require.NoError(t, rc.Start(t.Context()))
	t.Cleanup(func() { _ = rc.Stop(context.Background()) })
	return rc
}

// A worker whose client records its keys elsewhere than the store's
// journal is refused: a job run again could charge twice, and the budget's
// sweep would read no record of what was sent.
func TestNewWorkerNeedsTheStoresJournal(t *testing.T) {
	ctx := t.Context()
	srv := clienttest.NewServer(t)
	dir := t.TempDir()
	store, err := riverjob.Open(ctx, openSQLite(t, filepath.Join(dir, "queue.db")), mediagen.SQLite)
	require.NoError(t, err)
	other, err := riverjob.Open(ctx, openSQLite(t, filepath.Join(dir, "other.db")), mediagen.SQLite)
	require.NoError(t, err)

	for name, c := range map[string]*client.Client{
		"no journal":           srv.MustClient(),
		"another store's":      srv.MustClient(client.WithJournal(other.Journal())),
		"an in-memory journal": srv.MustClient(client.WithJournal(journal.NewMemory())),
	} {
		_, err := riverjob.NewWorker(c, store)
		assert.ErrorContains(t, err, "client.WithJournal(store.Journal())", name)
	}
	w, err := riverjob.NewWorker(srv.MustClient(client.WithJournal(store.Journal())), store)
	require.NoError(t, err)
	assert.NotNil(t, w)
	_, err = riverjob.NewWorker(srv.MustClient(client.WithJournal(wrapped{store.Journal()})), store)
	assert.NoError(t, err, "a journal that wraps the store's and says so")
	_, err = riverjob.NewWorker(srv.MustClient(client.WithJournal(wrapped{other.Journal()})), store)
	assert.Error(t, err, "one that wraps another")
}

// wrapped wraps a journal, as an instrumented one does, and says so.
type wrapped struct{ journal.Journal }

func (w wrapped) Unwrap() journal.Journal { return w.Journal }
