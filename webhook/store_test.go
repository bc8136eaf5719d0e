package webhook_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/webhook"
)

var _ webhook.Store = (*webhook.MemoryStore)(nil)

func claim(t *testing.T, s webhook.Store, id string) bool {
	t.Helper()
	fresh, err := s.Claim(context.Background(), id)
	require.NoError(t, err)
	return fresh
}

func TestMemoryStoreClaimAndRelease(t *testing.T) {
	s := webhook.NewMemoryStore(10)

	assert.True(t, claim(t, s, "a"))
	assert.False(t, claim(t, s, "a"), "a repeat is not fresh")
	assert.True(t, claim(t, s, "b"))
	assert.Equal(t, 2, s.Len())

	require.NoError(t, s.Release(context.Background(), "a"))
	assert.Equal(t, 1, s.Len())
	assert.True(t, claim(t, s, "a"), "a released id is taken again")

	require.NoError(t, s.Release(context.Background(), "never-claimed"))
	assert.Equal(t, 2, s.Len())
}

func TestMemoryStoreForgetsOldestFirst(t *testing.T) {
	s := webhook.NewMemoryStore(3)
	for _, id := range []string{"a", "b", "c", "d"} {
		require.True(t, claim(t, s, id))
	}
	assert.Equal(t, 3, s.Len())
	assert.False(t, claim(t, s, "b"))
	assert.False(t, claim(t, s, "c"))
	assert.False(t, claim(t, s, "d"))
	assert.True(t, claim(t, s, "a"), "the oldest id was forgotten")
	assert.Equal(t, 3, s.Len())
}

func TestMemoryStoreReleaseKeepsOrder(t *testing.T) {
	s := webhook.NewMemoryStore(2)
	require.True(t, claim(t, s, "a"))
	require.True(t, claim(t, s, "b"))
	require.NoError(t, s.Release(context.Background(), "a"))
	require.True(t, claim(t, s, "c"))
	assert.False(t, claim(t, s, "b"), "b was not evicted for c: the slot of a was free")
	assert.False(t, claim(t, s, "c"))
}

func TestMemoryStoreDefaultSize(t *testing.T) {
	for _, size := range []int{0, -1} {
		s := webhook.NewMemoryStore(size)
		for i := range webhook.DefaultStoreSize + 1 {
			require.True(t, claim(t, s, strconv.Itoa(i)))
		}
		assert.Equal(t, webhook.DefaultStoreSize, s.Len())
		assert.True(t, claim(t, s, "0"), "the first id was forgotten after DefaultStoreSize more")
	}
}

func TestMemoryStoreConcurrentClaims(t *testing.T) {
	s := webhook.NewMemoryStore(100)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			fresh, err := s.Claim(context.Background(), "same")
			assert.NoError(t, err)
			if fresh {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), wins.Load())
}
