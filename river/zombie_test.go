package riverjob_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/client/journal"
	riverjob "github.com/mediagen/mediagen-go/river"
)

// A zombie worker is one River rescued (its attempt outlived the rescue
// delay) while it still runs. These tests call Worker.Work themselves, on
// jobs no River client works, so each interleaving is set by the test.

// A zombie caught between its reservation and its claim of the key, whose
// job's next attempt sent nothing and released the reservation, does not
// send: it would be charged with nothing held.
func TestZombieDoesNotSendAfterNextAttemptReleased(t *testing.T) {
	eachDB(t, func(t *testing.T, q zombieQueue) {
		ctx := t.Context()
		job := q.insert(t, "k000", client.ImageGenerationArgs{Prompt: "k000 a kite"})
		before := q.srv.Balance()
		gate, zombie := q.zombie(t)
		<-gate.reached

		unsent := client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			if req.Method == http.MethodPost {
				return nil, errors.New("connection refused")
			}
			return next(req)
		})
		next := q.worker(t, q.srv.MustClient(client.WithJournal(q.store.Journal()), unsent))
		require.ErrorContains(t, next.Work(ctx, job), "connection refused")
		q.assertHeld(t, 0)

		close(gate.open)
		assert.ErrorContains(t, <-zombie, "reservation", "not sent")
		assert.InDelta(t, before, q.srv.Balance(), 1e-9, "nothing sent")
		q.assertCounted(t, before)
	})
}

// A zombie whose job was cancelled while it was between its reservation
// and its claim, and whose reservation Reconcile then released, does not
// send.
func TestZombieDoesNotSendAfterReconcileReleased(t *testing.T) {
	eachDB(t, func(t *testing.T, q zombieQueue) {
		ctx := t.Context()
		job := q.insert(t, "k000", client.ImageGenerationArgs{Prompt: "k000 a kite"})
		before := q.srv.Balance()
		gate, zombie := q.zombie(t)
		<-gate.reached
		q.cancel(t, job.ID)
		n, err := q.store.Reconcile(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n)

		close(gate.open)
		assert.ErrorContains(t, <-zombie, "reservation", "not sent")
		assert.InDelta(t, before, q.srv.Balance(), 1e-9, "nothing sent")
		q.assertCounted(t, before)
	})
}

// Reconcile does not end a reservation that a zombie claimed the key of
// and sent on after Reconcile read that nothing was sent: the charge stays
// counted, held, then settled at the estimate by the next Reconcile.
func TestReconcileKeepsReservationSentOnMeanwhile(t *testing.T) {
	eachDB(t, func(t *testing.T, q zombieQueue) {
		ctx := t.Context()
		args := client.ImageGenerationArgs{Prompt: "k000 a kite"}
		job := q.insert(t, "k000", args)
		before := q.srv.Balance()
		var once sync.Once
		var zombie <-chan error
		var gate gatedClaim
		q.store.SetBeforeEnd(func(string) {
			once.Do(func() { // the zombie claims and sends, then Reconcile ends
				close(gate.open)
				err := <-zombie
				var snooze *river.JobSnoozeError
				assert.ErrorAs(t, err, &snooze, "sent and snoozed")
			})
		})
		gate, zombie = q.zombie(t)
		<-gate.reached
		q.cancel(t, job.ID)
		n, err := q.store.Reconcile(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "sent on meanwhile: kept")
		q.assertCounted(t, before)

		n, err = q.store.Reconcile(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		q.assertHeld(t, 0)
		b := q.assertCounted(t, before)
		assert.InDelta(t, estimate(t, q.srv, args), b.Spent, 1e-6)
	})
}

// On PostgreSQL, Reconcile's end does not release a reservation that a
// zombie reserved again while the end statement waited for the row: the
// statement's view of the journal and of river_job is the snapshot it
// started with, only the row is read afresh once locked. A trigger the
// test adds holds the zombie's reserve, row locked, until the end waits.
func TestReconcileKeepsReservationReservedDuringEnd(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	q := newZombieQueue(t, e.srv, e.store, e.rc)
	job := q.insert(t, "k000", client.ImageGenerationArgs{Prompt: "k000 a kite"})
	before := q.srv.Balance()
	gate, w, _ := q.zombieOn(t)
	<-gate.reached // the first attempt reserved; it never claims
	q.cancel(t, job.ID)

	lock, err := e.db.Conn(ctx)
	require.NoError(t, err)
	defer lock.Close()
	_, err = lock.ExecContext(ctx, `SELECT pg_advisory_lock(7)`)
	require.NoError(t, err)
	_, err = e.db.ExecContext(ctx, `CREATE FUNCTION wait_for_test() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN PERFORM pg_advisory_xact_lock_shared(7); RETURN NEW; END $$;
		CREATE TRIGGER wait_for_test BEFORE UPDATE ON mediagen_river_reservations
		FOR EACH ROW WHEN (OLD.state = 'held' AND NEW.state = 'held') EXECUTE FUNCTION wait_for_test()`)
	require.NoError(t, err)
	waiting := func(locktype string) func() bool {
		return func() bool {
			var n int
			err := e.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = $1 AND NOT granted`, locktype).Scan(&n)
			return err == nil && n > 0
		}
	}

	// A zombie of the job works it again (the worker swept a moment ago):
	// its reserve holds the row, and waits.
	zombie := make(chan error, 1)
	go func() { zombie <- w.Work(ctx, job) }()
	require.Eventually(t, waiting("advisory"), 10*time.Second, time.Millisecond)
	reconciled := make(chan int, 1)
	go func() {
		n, err := q.store.Reconcile(ctx)
		assert.NoError(t, err)
		reconciled <- n
	}()
	require.Eventually(t, waiting("transactionid"), 10*time.Second, time.Millisecond, "the end waits for the row")
	_, err = lock.ExecContext(ctx, `SELECT pg_advisory_unlock(7)`)
	require.NoError(t, err)

	assert.Zero(t, <-reconciled, "reserved again meanwhile: kept")
	var snooze *river.JobSnoozeError
	assert.ErrorAs(t, <-zombie, &snooze, "sent and snoozed")
	q.assertCounted(t, before)
}

// zombieQueue is a store and a River client that inserts and cancels jobs
// and works none, on PostgreSQL or SQLite.
type zombieQueue struct {
	srv    *clienttest.Server
	store  *riverjob.Store
	insert func(t *testing.T, key string, args client.Args) *river.Job[riverjob.Args]
	cancel func(t *testing.T, id int64)
}

// eachDB runs f on PostgreSQL and on SQLite, each with a budget of 10 USD.
func eachDB(t *testing.T, f func(t *testing.T, q zombieQueue)) {
	t.Run("postgres", func(t *testing.T) {
		e := newEnv(t)
		f(t, newZombieQueue(t, e.srv, e.store, e.rc))
	})
	t.Run("sqlite", func(t *testing.T) {
		db := openSQLite(t, filepath.Join(t.TempDir(), "queue.db"))
		store, err := riverjob.Open(t.Context(), db, mediagen.SQLite)
		require.NoError(t, err)
		driver := riversqlite.New(db)
		migrator, err := rivermigrate.New(driver, nil)
		require.NoError(t, err)
		_, err = migrator.Migrate(t.Context(), rivermigrate.DirectionUp, nil)
		require.NoError(t, err)
		rc, err := river.NewClient(driver, &river.Config{})
		require.NoError(t, err)
		f(t, newZombieQueue(t, clienttest.NewServer(t, clienttest.WithWallClock()), store, rc))
	})
}

func newZombieQueue[TTx any](t *testing.T, srv *clienttest.Server, store *riverjob.Store, rc *river.Client[TTx]) zombieQueue {
	require.NoError(t, store.SetBudget(t.Context(), river.QueueDefault, 10))
	return zombieQueue{srv: srv, store: store,
		insert: func(t *testing.T, key string, args client.Args) *river.Job[riverjob.Args] {
			id := insertJob(t, rc, key, args, nil)
			row, err := rc.JobGet(t.Context(), id)
			require.NoError(t, err)
			ja, err := riverjob.NewArgs(key, args)
			require.NoError(t, err)
			return &river.Job[riverjob.Args]{JobRow: row, Args: ja}
		},
		cancel: func(t *testing.T, id int64) {
			_, err := rc.JobCancel(t.Context(), id)
			require.NoError(t, err)
		},
	}
}

// worker returns a worker of c on the queue's store.
func (q zombieQueue) worker(t *testing.T, c *client.Client) *riverjob.Worker {
	w, err := riverjob.NewWorker(c, q.store)
	require.NoError(t, err)
	return w
}

// zombie starts working the only job of the key k000, on a worker whose
// claim of the key waits, after it signals gate.reached, until gate.open
// is closed; Work's error comes on the channel.
func (q zombieQueue) zombie(t *testing.T) (gatedClaim, <-chan error) {
	gate, _, errc := q.zombieOn(t)
	return gate, errc
}

// zombieOn is zombie, and returns the worker too: its next claims of k000
// do not wait.
func (q zombieQueue) zombieOn(t *testing.T) (gatedClaim, *riverjob.Worker, <-chan error) {
	gate := gatedClaim{Journal: q.store.Journal(), key: "k000", reached: make(chan struct{}), open: make(chan struct{}), once: new(sync.Once)}
	w := q.worker(t, q.srv.MustClient(client.WithJournal(gate)))
	row := q.insert(t, "k000", client.ImageGenerationArgs{Prompt: "k000 a kite"}) // unique by key: the same job
	errc := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { errc <- w.Work(ctx, row) }()
	return gate, w, errc
}

// assertHeld checks what the queue's budget holds.
func (q zombieQueue) assertHeld(t *testing.T, held float64) {
	b, _, err := q.store.Budget(t.Context(), river.QueueDefault)
	require.NoError(t, err)
	assert.InDelta(t, held, b.Held, 1e-9)
}

// assertCounted checks that what the server charged since before is
// counted in the queue's budget, held or spent, and returns the budget.
func (q zombieQueue) assertCounted(t *testing.T, before float64) riverjob.Budget {
	b, _, err := q.store.Budget(t.Context(), river.QueueDefault)
	require.NoError(t, err)
	assert.LessOrEqual(t, before-q.srv.Balance(), b.Held+b.Spent+1e-9, "charged with nothing held: %+v", b)
	return b
}

// gatedClaim is a journal whose first claim of key waits, once it closed
// reached, until open is closed or its caller gives up: a worker caught
// between its reservation and its claim.
type gatedClaim struct {
	journal.Journal
	key           string
	reached, open chan struct{}
	once          *sync.Once
}

// Unwrap says which journal gatedClaim records in, for NewWorker.
func (j gatedClaim) Unwrap() journal.Journal { return j.Journal }

func (j gatedClaim) Claim(ctx context.Context, r journal.Record) (journal.Record, bool, error) {
	first := false
	if r.Key == j.key {
		j.once.Do(func() { first = true })
	}
	if first {
		close(j.reached)
		select {
		case <-j.open:
		case <-ctx.Done():
			return journal.Record{}, false, ctx.Err()
		}
	}
	return j.Journal.Claim(ctx, r)
}
