package webhook

import (
	"context"
	"database/sql"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/mediagen/mediagen-go"
)

// The longest interval a Duration holds schedules the next background
// cleanup at the end of time, not, wrapped, before every claim.
func TestCleanupIntervalSaturates(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "s.db"))
	require.NoError(t, err) // left open: the cleanup started in the background may outlive the test
	s, err := OpenSQLStore(t.Context(), db, mediagen.SQLite, WithCleanupInterval(math.MaxInt64))
	require.NoError(t, err)
	now := time.Now().Add(2 * time.Minute) // past the first run's minute
	s.maybeCleanup(context.Background(), now)
	next := s.nextCleanup.Load()
	assert.Equal(t, int64(math.MaxInt64), next, "the next run: never")
	s.maybeCleanup(context.Background(), now.Add(time.Hour))
	assert.Equal(t, next, s.nextCleanup.Load(), "no second run an hour later")
}
