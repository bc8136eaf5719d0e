// Package replicas holds the proof that webhook events end waits across
// processes: the reference server command delivers the webhooks of
// generations to two receiver processes (./receiver), which share each
// event through a hub.SQLExchange in one database (SQLite file or
// PostgreSQL), and a third process (./waiter) creates the generations and
// waits on them with a hub of its own that reads that exchange. The test
// checks that every wait ended with its generation done, at most 1.1 API
// requests per generation, create included, and reports the time from a
// receiver's delivery to the wait's return. It has no code of its own; run
// it with `go test ./internal/replicas/`.
package replicas
