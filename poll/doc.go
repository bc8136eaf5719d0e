// Package poll waits for generations and voice clones to reach a terminal
// state.
//
// Checks start fast and slow down by kind, as the interface document
// advises: images and text after 1 s, then up to every 3 s; audio 2 s to
// 5 s; video and voice clones 5 s to 10 s, each interval with jitter so
// waiters do not call in step. Options are this package's own [Option];
// client options reach the wait's requests through [WithClientOptions].
//
// How a wait ends:
//   - done: the generation and a nil error.
//   - error or timeout: the generation and a [*FailedError]; the charge was
//     refunded, so submitting again is safe.
//   - 404: a [*GoneError] matching [ErrGone] (API-created generations are
//     deleted 24 hours after their request).
//   - the context ends, [WithMaxWait] passes, or a check still fails after
//     the client's retries: a [*GaveUpError] with the id and last state,
//     to resume later; it matches the context's error or [ErrMaxWait].
//
// [Generations] waits for many ids through the list endpoint, a page of
// 100 per request instead of one GET per id. [WithHub] ends waits on
// verified webhook events. Waits use the client's clock, so against the
// test kit's reference server (clienttest) they finish at once.
package poll
