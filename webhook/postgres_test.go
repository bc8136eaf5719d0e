package webhook_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/mediagen/mediagen-go/internal/pgtest"
)

// durableEnv keeps the engines' default durability (a flush to disk at
// every commit), for benchmarks that must show its cost.
const durableEnv = pgtest.DurableEnv

// TestMain stops the PostgreSQL server the tests may have started.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := pgtest.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the test PostgreSQL server:", err)
	}
	os.Exit(code)
}

// postgresDSN returns the DSN of a new, empty database on the test
// PostgreSQL server; see package pgtest.
func postgresDSN(tb testing.TB) string { return pgtest.DSN(tb) }
