package charge

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClaims(t *testing.T) {
	cs := newClaims()
	_, ok := cs.take("a", claim{})
	require.True(t, ok)
	bound := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	_, ok = cs.take("b", claim{bound: bound})
	require.True(t, ok)

	prev, ok := cs.take("b", claim{})
	assert.False(t, ok, "an id is handed out once")
	assert.Equal(t, bound, prev.bound, "the loser learns where the searcher's own row lies")

	id, ok := cs.takeFirst([]string{"a", "b", "c", "d"}, claim{})
	assert.True(t, ok)
	assert.Equal(t, "c", id, "the first unclaimed candidate")
	_, ok = cs.takeFirst([]string{"a", "b", "c"}, claim{})
	assert.False(t, ok)
}

func TestClaimsAreBounded(t *testing.T) {
	cs := newClaims()
	for i := range maxClaims + 10 {
		_, ok := cs.take(fmt.Sprint(i), claim{})
		require.True(t, ok)
	}
	assert.Len(t, cs.byID, maxClaims)
	_, ok := cs.take("0", claim{})
	assert.True(t, ok, "the oldest ids are forgotten first")
	_, ok = cs.take(fmt.Sprint(maxClaims+9), claim{})
	assert.False(t, ok)
}

func TestSearchWindowBound(t *testing.T) {
	start := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	received := start.Add(2 * time.Second)
	serverNow := time.Date(2026, 1, 5, 9, 0, 10, 0, time.UTC) // a clock far from ours

	w := Window{Start: start}
	assert.Equal(t, serverNow.Add(-2*time.Second-clockSkew), w.Bound(serverNow, received),
		"the attempt's start on the service's clock, less the skew")
	assert.Equal(t, start.Add(-clockSkew), w.Bound(time.Time{}, received), "no Date header: our clock")
	floor := serverNow.Add(-time.Minute)
	assert.Equal(t, floor, Window{Start: start, Floor: floor}.Bound(serverNow, received))
}

func TestSearchLocksHonourTheContext(t *testing.T) {
	l := newSearchLocks()
	unlock, err := l.lock(context.Background(), "k")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = l.lock(ctx, "k")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	unlock()
	unlock2, err := l.lock(context.Background(), "k")
	require.NoError(t, err)
	unlock2()
}
