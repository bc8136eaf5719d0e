package riverjob

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/mediagen/mediagen-go/webhook"
)

// Waker makes a job available at once when the webhook event that ends its
// generation arrives, instead of at its next check. Give its Deliver to
// webhook.Handler, in any process that reaches the queue's database: the
// event is stored for the job, which reads it instead of asking the service.
type Waker struct {
	store *Store
	retry func(ctx context.Context, job int64) error
}

// NewWaker returns a waker over store that wakes jobs through rc, a River
// client on the same database (it needs no workers of its own).
func NewWaker[TTx any](rc *river.Client[TTx], store *Store) (*Waker, error) {
	if rc == nil || store == nil {
		return nil, errors.New("riverjob: NewWaker needs a River client and a store")
	}
	return &Waker{store: store, retry: func(ctx context.Context, id int64) error {
		// A job still running (it just sent, and is about to snooze) is
		// waited for a little, or its snooze would outlast the event.
		for range wakeTries {
			job, err := rc.JobGet(ctx, id)
			if errors.Is(err, river.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			switch job.State {
			case rivertype.JobStateScheduled, rivertype.JobStateAvailable, rivertype.JobStateRetryable:
				_, err = rc.JobRetry(ctx, id)
				return err
			case rivertype.JobStateRunning:
				select {
				case <-time.After(wakeWait):
				case <-ctx.Done():
					return ctx.Err()
				}
			default:
				return nil
			}
		}
		return nil // still running: its next check finds the event
	}}, nil
}

// How long Deliver waits for a running job to snooze before waking it:
// wakeTries reads of its state, wakeWait apart.
const (
	wakeTries = 40
	wakeWait  = 50 * time.Millisecond
)

// Deliver takes a verified webhook event: a generation's terminal event is
// stored and wakes the job waiting on it; other events are ignored. Its
// signature is webhook.Handler's callback's; an error makes the handler
// answer 500, so the service sends the event again.
func (w *Waker) Deliver(ctx context.Context, ev *webhook.Event) error {
	g := ev.Generation
	if g == nil || !g.Terminal() {
		return nil
	}
	body, err := json.Marshal(g)
	if err != nil {
		return err
	}
	job, err := w.store.ended(ctx, g.ID, body)
	if err != nil || job == 0 {
		return err
	}
	return w.retry(ctx, job)
}
