// Package mediagentemporal runs generations of the media generation service as
// Temporal activities that charge once, whatever Temporal retries.
//
// Register an Activities with a worker and call Activities.Generate from a
// workflow. The activity submits with an idempotency key made from the
// workflow id and the activity id, which stay the same across attempts, so
// a retried attempt finds the generation the first one submitted in the
// client's journal (client.WithJournal; share a journal.SQL between workers
// so a dead worker's submission is found too) instead of charging again.
// It heartbeats the generation id, and an attempt that starts with heartbeat
// details resumes waiting for that generation without submitting at all.
//
//	acts, err := mediagentemporal.New(c, mediagentemporal.WithHub(h))
//	w.RegisterActivity(acts)
//
//	// in the workflow
//	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
//		StartToCloseTimeout: 30 * time.Minute,
//		HeartbeatTimeout:    time.Minute,
//	})
//	var res mediagentemporal.Result
//	err := workflow.ExecuteActivity(ctx, acts.Generate, req).Get(ctx, &res)
//
// A render that ends in error or timeout (the service refunded it) fails the
// activity with a non-retryable application error of type ErrorFailed whose
// details are a Failure, so Temporal does not submit it again.
//
// Waits are webhook-first when a hub is given (WithHub) and poll as
// a backstop. With WithAsyncCompletion the activity does not wait at all:
// it submits, records its task token by generation id in a TokenStore and
// returns activity.ErrResultPending, freeing the worker's slot; the webhook
// receiver passes each event to Completer.Deliver, which completes the
// activity. A lost event is caught by the activity's StartToCloseTimeout:
// the retried attempt finds the generation by its key and, when it has
// finished, completes at once.
package mediagentemporal
