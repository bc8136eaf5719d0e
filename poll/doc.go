// Package poll waits for generations and voice clones to reach a terminal
// state.
//
// Checks start fast and slow down, by kind, as the interface document
// advises: images and text are checked after 1 s, then up to every 3 s;
// audio after 2 s, up to every 5 s; video and voice clones after 5 s, up to
// every 10 s. Every interval carries jitter so that many waiters do not
// call in step. [WithInterval] replaces the schedule with a fixed interval,
// [WithMaxWait] bounds the wait apart from the context, and [OnUpdate]
// reports every status change.
//
// A wait takes options of this package's own [Option] type; the options of
// package client (a timeout, a header, a retry policy, middleware) reach
// its requests through [WithClientOptions]. An option given where it does
// not apply does not compile, and a bad one fails the wait before anything
// is sent.
//
// How a wait ends:
//   - done: the generation and a nil error.
//   - error or timeout: the generation and a [*FailedError] carrying it; the
//     service refunded its charge, so submitting again is safe.
//   - 404 while waiting: a [*GoneError] matching [ErrGone]; API-created
//     generations are deleted 24 hours after their request.
//   - the context ends, [WithMaxWait] passes or the service keeps failing: a
//     [*GaveUpError] with the id and the last state seen, so the wait can be
//     resumed later; errors.Is matches context.Canceled,
//     context.DeadlineExceeded or [ErrMaxWait].
//
// A check that fails (a 503, a dropped connection) is not skipped by the
// wait: the client has already retried it with backoff (see
// client.WithRetryPolicy), so an error that reaches the wait has lasted, and
// the wait ends with a [*GaveUpError] that unwraps to it. The work goes on
// at the service; wait again with the id to resume. Raise the client's
// retries for long waits over an unreliable network.
//
// [Generations] waits for many generations at once through the list
// endpoint, a page of 100 per request, instead of one GET per id, and
// returns a [Result] per id.
//
// Waiting is this package's one job, in one loop for every kind of wait.
// Verified webhook events end waits early through a hub of package hub
// ([WithHub]); [WithSaveTo] and [WithSaveFunc] hand done generations to the
// client's one save (client.Client.SaveOutput).
//
// Waits read the time and sleep on the client's clock: against the test
// kit's reference server (package clienttest), a wait moves the server's
// clock instead of the wall clock, so a test that submits and waits
// finishes at once.
package poll
