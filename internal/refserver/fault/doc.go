// Package fault injects failures into the reference server on purpose, so the
// SDK's retries and reconciliation are tested against breakage instead of
// against a server that always behaves.
//
// Two kinds of faults exist. HTTP faults (Injector.Wrap) replace answers with
// 5xx or 429 errors, drop connections before or after a request is processed,
// and slow answers down. Render faults (Injector.Outcome) tell the server how a
// render or a voice-clone training ends.
//
// A zero Config injects nothing. Faults are drawn from a seeded generator, so
// the same seed and the same sequence of requests give the same faults. HTTP
// faults and render outcomes draw from two separate streams, so the timing of
// renders cannot shift which requests fail and the other way round.
//
// An Injector is safe for concurrent use, and a nil *Injector injects nothing.
package fault
