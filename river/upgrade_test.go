package riverjob_test

import (
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/pgtest"
	riverjob "github.com/mediagen/mediagen-go/river"
)

// oldTables are the generations table as the first version of the package
// created it, before the result and created columns, and the reservations
// table before the job_id and updated columns.
const oldTables = `CREATE TABLE mediagen_river_generations (
	id text PRIMARY KEY, job_id bigint NOT NULL DEFAULT 0, body text);
CREATE TABLE mediagen_river_reservations (
	key text PRIMARY KEY, queue text NOT NULL, amount bigint NOT NULL,
	charged bigint NOT NULL DEFAULT 0, state text NOT NULL)`

// On PostgreSQL, the tables an earlier version created, without the
// columns added since, gain them when two processes open the store at once,
// and a job then completes with its result and its reservation recorded.
func TestOpenUpgradesOldTable(t *testing.T) {
	dsn := pgtest.DSN(t)
	open := func() *sql.DB {
		db, err := sql.Open("pgx", dsn)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	}
	db := open()
	_, err := db.ExecContext(t.Context(), oldTables)
	require.NoError(t, err)
	openTwice(t, mediagen.PostgreSQL, open)

	e := newEnvAt(t, dsn)
	require.NoError(t, e.store.SetBudget(t.Context(), river.QueueDefault, 10))
	e.worker(t, 1, e.client(), riverjob.WithSaveTo(t.TempDir()))
	e.insert(t, mixed(1))
	jobs := e.waitJobs(t, 30*time.Second)
	require.Len(t, jobs[rivertype.JobStateCompleted], 1, "jobs: %v", jobs)
	assertResultRecorded(t, db, jobs[rivertype.JobStateCompleted][0])
}

// openTwice opens the store twice at once, each on a database handle of
// its own, as two processes starting together, and returns one of them.
func openTwice(t *testing.T, d mediagen.Dialect, open func() *sql.DB) *riverjob.Store {
	t.Helper()
	dbs := []*sql.DB{open(), open()}
	stores := make([]*riverjob.Store, len(dbs))
	errs := make([]error, len(dbs))
	var wg sync.WaitGroup
	for i, db := range dbs {
		wg.Go(func() { stores[i], errs[i] = riverjob.Open(t.Context(), db, d) })
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	return stores[0]
}

// assertResultRecorded checks that the generations table of db holds the
// result of job, the only one, and the reservations table its settled
// reservation.
func assertResultRecorded(t *testing.T, db *sql.DB, job *rivertype.JobRow) {
	t.Helper()
	var result sql.NullString
	require.NoError(t, db.QueryRowContext(t.Context(), `SELECT result FROM mediagen_river_generations`).Scan(&result))
	require.True(t, result.Valid, "no result recorded")
	assert.JSONEq(t, string(job.Output()), result.String)
	var jobID int64
	var state string
	require.NoError(t, db.QueryRowContext(t.Context(), `SELECT job_id, state FROM mediagen_river_reservations`).Scan(&jobID, &state))
	assert.Equal(t, job.ID, jobID)
	assert.Equal(t, "settled", state)
}
