package poll

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
)

// A check's retries count in WithMaxWait: a 429 whose Retry-After ends past
// the max wait, waited out by the client's default policy, used to run the
// wait tens of seconds over it.
func TestMaxWaitBoundsTheClientRetries(t *testing.T) {
	e := newEnv(t)
	g := e.image(t)
	frozen := newFakeClock() // the render never ends
	frozen.onSleep = func(time.Duration) {
		require.NoError(t, e.srv.SetFaults(clienttest.Faults{HTTPStatus: 1, Statuses: []int{http.StatusTooManyRequests},
			RetryAfter: 8 * time.Second, Methods: []string{http.MethodGet}}))
	}
	opts := []Option{withClock(frozen), WithMaxWait(10 * time.Second), WithClientOptions(client.WithRetryPolicy(client.DefaultRetryPolicy()))}
	spent := func() (total time.Duration) {
		for _, w := range frozen.waits() {
			total += w
		}
		frozen.reset()
		require.NoError(t, e.srv.SetFaults(clienttest.Faults{}))
		return total
	}
	_, err := Generation(context.Background(), e.c, g.ID, opts...)
	var gu *GaveUpError
	require.ErrorAs(t, err, &gu)
	assert.ErrorIs(t, err, ErrMaxWait)
	assert.LessOrEqual(t, spent(), 10*time.Second)

	_, err = Generations(context.Background(), e.c, []string{g.ID}, opts...)
	require.ErrorAs(t, err, &gu)
	assert.ErrorIs(t, err, ErrMaxWait)
	assert.LessOrEqual(t, spent(), 10*time.Second)
}
