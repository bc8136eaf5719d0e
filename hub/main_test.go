package hub

import (
	"fmt"
	"os"
	"testing"

	"github.com/mediagen/mediagen-go/internal/pgtest"
)

// TestMain stops the PostgreSQL server the tests may have started.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := pgtest.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the test PostgreSQL server:", err)
	}
	os.Exit(code)
}
