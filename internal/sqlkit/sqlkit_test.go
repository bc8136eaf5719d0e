package sqlkit

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidIdentifier(t *testing.T) {
	for name, want := range map[string]bool{
		"mediagen_journal": true, "Select": true, "_x9": true, strings.Repeat("a", 48): true,
		"": false, "9x": false, "a-b": false, `a"b`: false, "a b": false, strings.Repeat("a", 49): false,
	} {
		assert.Equal(t, want, ValidIdentifier(name, 48), name)
	}
}

type coded int

func (c coded) Error() string { return "sqlite error" }
func (c coded) Code() int     { return int(c) }

func TestBusy(t *testing.T) {
	assert.True(t, Busy(coded(5)))
	assert.True(t, Busy(coded(6|256)), "extended codes keep the primary in the low byte")
	assert.False(t, Busy(coded(19)))
	assert.True(t, Busy(errors.New("database is locked (5) (SQLITE_BUSY)")))
	assert.False(t, Busy(errors.New("no such table")))
}

func TestRebind(t *testing.T) {
	assert.Equal(t, "SELECT a FROM t WHERE k = $1 AND v > $2", Rebind(true, "SELECT a FROM t WHERE k = ? AND v > ?"))
	assert.Equal(t, "SELECT a FROM t WHERE k = ?", Rebind(false, "SELECT a FROM t WHERE k = ?"))
}
