// Package client is the Go client of the media generation service.
//
// Create a [Client] with [New], then submit generations with
// [Client.CreateGeneration], follow them with [Client.GetGeneration] or
// [Client.Generations], and read prices with [Client.Pricing]. Typed
// arguments exist for every feature ([LogoRevealArgs], [VoiceoverArgs], ...);
// a map[string]any is accepted as well.
//
// # Retries and billing
//
// Reads and deletes (GET, DELETE, PUT) are retried on connection errors and
// on 429, 502, 503 and 504, with jittered exponential backoff that honours
// Retry-After and stops when the context ends. Requests that charge the
// balance (submitting a generation, cloning a voice) are resent blindly only
// when the service cannot have accepted them: a 429, or a connection that
// never carried the request. After an ambiguous failure (the connection broke
// after the request was sent, or a 5xx) the client looks for the generation
// or clone the attempt may have created and returns it; it submits again only
// when there is none. So a call that returns an error was not charged, unless
// its context ended first or the search itself failed ([UncertainError]):
// see [Client.CreateGeneration].
//
// The API key is sent in the Authorization header only. It never appears in
// an error, a log line, or a request to the storage host.
package client
