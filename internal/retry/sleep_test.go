package retry

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSleep(t *testing.T) {
	start := time.Now()
	assert.NoError(t, Sleep(context.Background(), 20*time.Millisecond))
	assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	assert.ErrorIs(t, Sleep(ctx, time.Hour), context.Canceled, "a cancelled context ends the wait at once")
	assert.Less(t, time.Since(start), time.Second)
	assert.ErrorIs(t, Sleep(ctx, 0), context.Canceled, "no wait still reports the ended context")
	assert.NoError(t, Sleep(context.Background(), -time.Second))

	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, Sleep(ctx, time.Hour), context.DeadlineExceeded)
}
