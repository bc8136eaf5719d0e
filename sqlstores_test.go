package mediagen_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // registers "sqlite", pure Go

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/webhook"
)

// TestStoresRetryBusySQLite has a second connection hold the database's
// write lock for a moment while the journal and the webhook store write,
// on connections without a busy timeout, so SQLite answers SQLITE_BUSY at
// once: both statements succeed, retried through Dialect.Retry's one
// backoff.
func TestStoresRetryBusySQLite(t *testing.T) {
	ctx := t.Context()
	dsn := "file:" + filepath.Join(t.TempDir(), "stores.db") + "?_pragma=journal_mode(WAL)"
	open := func() *sql.DB {
		db, err := sql.Open("sqlite", dsn)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	}
	db := open()
	j, err := journal.Open(ctx, db, mediagen.SQLite)
	require.NoError(t, err)
	store, err := webhook.OpenSQLStore(ctx, db, mediagen.SQLite, webhook.WithCleanupInterval(0))
	require.NoError(t, err)

	var retries atomic.Int32
	mediagen.OnBusyRetry(t, func(error) { retries.Add(1) })
	holder := open()
	// lock holds the write lock for hold, then lets go.
	lock := func(hold time.Duration) <-chan error {
		conn, err := holder.Conn(ctx)
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, `BEGIN EXCLUSIVE`)
		require.NoError(t, err)
		released := make(chan error, 1)
		time.AfterFunc(hold, func() {
			_, err := conn.ExecContext(context.Background(), `COMMIT`)
			conn.Close()
			released <- err
		})
		return released
	}
	const hold = 150 * time.Millisecond

	released := lock(hold)
	start := time.Now()
	_, fresh, err := j.Claim(ctx, journal.Record{Key: "k", Op: "generation", Holder: "a", Created: time.Now()})
	require.NoError(t, err)
	assert.True(t, fresh)
	assert.GreaterOrEqual(t, time.Since(start), hold/2, "the claim waited for the lock")
	require.NoError(t, <-released)
	assert.Positive(t, retries.Load(), "the journal's statement was retried")

	retries.Store(0)
	released = lock(hold)
	fresh, err = store.Claim(ctx, "generation.done generation gen_1")
	require.NoError(t, err)
	assert.True(t, fresh)
	require.NoError(t, <-released)
	assert.Positive(t, retries.Load(), "the webhook store's statement was retried")
}
