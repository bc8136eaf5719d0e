// Package riverjob runs generations as jobs on River (riverqueue.com), on as
// many machines as share one database: PostgreSQL through River's pgx driver
// (riverpgxv5), or SQLite (riversqlite) for one machine.
//
// A job (Args) names a feature, its arguments, an idempotency key and where
// to save the outputs. The Worker submits it through the SDK's client with
// that key recorded in a journal in the same database, so River may run a
// job again after a crash, a timeout or a killed worker without a second
// charge; it snoozes while the service renders instead of holding a worker
// slot, and a Waker given to the webhook receiver makes the job available
// as soon as its event arrives. A Store in the same database keeps what the
// workers share: the journal, the generations the jobs wait on and a budget
// per queue, reserved before each submit so that all the workers together
// never spend more than it.
//
//	store, _ := riverjob.Open(ctx, db, mediagen.PostgreSQL)
//	c, _ := client.New("", client.WithJournal(store.Journal()))
//	w, _ := riverjob.NewWorker(c, store, riverjob.WithSaveTo("out"))
//	workers := river.NewWorkers()
//	river.AddWorker(workers, w)
//
// The module is separate from the SDK's so that River and its drivers stay
// out of the SDK's go.mod.
package riverjob
