package mediagen

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckTable(t *testing.T) {
	for name, want := range map[string]bool{
		"mediagen_journal": true, "Select": true, "_x9": true, strings.Repeat("a", 48): true,
		"": false, "9x": false, "a-b": false, `a"b`: false, "a b": false, "été": false, strings.Repeat("a", 49): false,
	} {
		err := CheckTable(name)
		assert.Equal(t, want, err == nil, "%q: %v", name, err)
	}
}

type coded int

func (c coded) Error() string { return "sqlite error" }
func (c coded) Code() int     { return int(c) }

func TestBusy(t *testing.T) {
	assert.True(t, busy(coded(5)))
	assert.True(t, busy(coded(6|256)), "extended codes keep the primary in the low byte")
	assert.False(t, busy(coded(19)))
	assert.True(t, busy(errors.New("database is locked (5) (SQLITE_BUSY)")))
	assert.False(t, busy(errors.New("no such table")))
	assert.False(t, busy(nil))
}

func TestRebind(t *testing.T) {
	assert.Equal(t, "SELECT a FROM t WHERE k = $1 AND v > $2", PostgreSQL.Rebind("SELECT a FROM t WHERE k = ? AND v > ?"))
	assert.Equal(t, "SELECT a FROM t WHERE k = ?", SQLite.Rebind("SELECT a FROM t WHERE k = ?"))
}

func TestDialectString(t *testing.T) {
	assert.Equal(t, "PostgreSQL", PostgreSQL.String())
	assert.Equal(t, "SQLite", SQLite.String())
	assert.Equal(t, "Dialect(0)", Dialect(0).String())
	assert.NoError(t, SQLite.Check())
	assert.ErrorContains(t, Dialect(7).Check(), "Dialect(7)")
}

func TestRetry(t *testing.T) {
	ctx := t.Context()
	calls := 0
	err := SQLite.Retry(ctx, func() error {
		calls++
		if calls < 3 {
			return coded(5)
		}
		return nil
	})
	assert.NoError(t, err)
	assert.Equal(t, 3, calls, "busy twice, then done")

	calls = 0
	err = SQLite.Retry(ctx, func() error { calls++; return coded(5) })
	assert.Equal(t, coded(5), err)
	assert.Equal(t, busyRetries+1, calls, "a lock held for good is reported")

	calls = 0
	err = PostgreSQL.Retry(ctx, func() error { calls++; return coded(5) })
	assert.Error(t, err)
	assert.Equal(t, 1, calls, "only SQLite is retried")

	calls = 0
	err = SQLite.Retry(ctx, func() error { calls++; return errors.New("no such table") })
	assert.Error(t, err)
	assert.Equal(t, 1, calls, "only busy answers are retried")

	done, cancel := context.WithCancel(ctx)
	cancel()
	err = SQLite.Retry(done, func() error { return coded(5) })
	assert.ErrorIs(t, err, context.Canceled)
}
