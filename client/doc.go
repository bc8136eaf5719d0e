// Package client is the Go client of the media generation service.
//
// Create a [Client] with [New] and submit generations with [Client.CreateGeneration], passing typed
// arguments that know their feature ([LogoRevealArgs], [VoiceoverArgs], ...) or [RawArgs]. Follow them with
// package poll, [Client.GetGeneration] or a webhook; save their outputs with [Client.SaveOutput] (or
// [Client.SaveOutputFunc], to any writer); read prices with [Client.Pricing] and [Pricing.Estimate].
//
//	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a lighthouse at dusk"})
//
// One [Option] type configures the client in [New] and any single call, on top of the client's.
// Packages upload, poll and batch have option types of their own, so a misplaced option does not compile;
// each carries client options to its requests in WithClientOptions, checked first by [CheckOptions].
//
// # Retries and billing
//
// Reads and deletes are retried on connection errors and on 429, 500, 502, 503 and 504, with jittered
// exponential backoff that honours Retry-After and the context ([RetryPolicy]). Requests that charge
// (submitting a generation, cloning a voice) are resent blindly only when the service cannot have
// accepted them: a 429, or a connection that never carried the request. After an ambiguous failure (the
// connection broke after sending, or a 5xx) the client searches the rows requested since the attempt began,
// less a margin for the service's clocks that it learns from its own rows, and returns what the attempt
// created, submitting again only when there is none. So a call that returns an error was not charged,
// unless its context ended first or the service failed for longer than the search's own patience
// ([SearchBudget]): an [UncertainError], which [Client.FindGeneration] resolves.
//
// The service has no idempotency key; [WithIdempotencyKey] gives a charging call one, recorded in a
// journal ([WithJournal], package client/journal) that every client sharing it consults before sending:
// a key charges once across goroutines, processes, restarts and replicas, and [Client.Unfinished] lists
// what a restarted program still has to wait for or save.
//
// The API key is sent in the Authorization header only, never in an error, a log line, or a request to
// the storage host.
package client
