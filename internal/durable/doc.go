// Package durable holds the proof that an idempotency key charges once
// across processes: worker processes (./worker) submit overlapping keys
// through a shared journal (SQLite file or PostgreSQL) against the
// reference server command with faults injected, are killed with SIGKILL at
// random points, including between a generation's creation and its record,
// and are started again. The test then checks on the server that every key
// has exactly one generation, that the balance moved by exactly their
// charges, and that every worker was handed the same id for a key. It has
// no code of its own; run it with `go test ./internal/durable/`.
package durable
