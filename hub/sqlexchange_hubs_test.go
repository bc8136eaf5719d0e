package hub

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
)

// Two writers on their own connections publish thousands of events at
// once; a reader following the cursor gets every one.
func TestSQLExchangeNothingLost(t *testing.T) {
	if testing.Short() {
		t.Skip("publishes thousands of events")
	}
	const writers, perWriter, goroutines = 2, 2000, 4
	forEachEngine(t, func(t *testing.T, e xEngine, dsn string) {
		ctx := t.Context()
		reader := e.exchange(t, e.open(t, dsn))
		var wg sync.WaitGroup
		for w := range writers {
			x := e.exchange(t, e.open(t, dsn))
			for g := range goroutines {
				wg.Go(func() {
					for i := range perWriter / goroutines {
						id := fmt.Sprintf("gen_%d_%d_%d", w, g, i)
						assert.NoError(t, x.Publish(ctx, genEvent(id, mediagen.GenerationStatusDone)))
					}
				})
			}
		}
		written := make(chan struct{})
		go func() { wg.Wait(); close(written) }()

		seen := map[string]bool{}
		var cursor, naiveCursor int64
		naiveSeen := map[string]bool{} // a reader that moves to the last seq it read
		held, reads := 0, 0
		deadline := time.Now().Add(time.Minute)
		for len(seen) < writers*perWriter && time.Now().Before(deadline) {
			evs, next, err := reader.Since(ctx, cursor)
			require.NoError(t, err)
			reads++
			for _, ev := range evs {
				seen[ev.Generation.ID] = true
			}
			if len(evs) > 0 && next < cursor+int64(len(evs)) {
				held++
			}
			cursor = next
			naiveCursor = naiveRead(t, reader, naiveCursor, naiveSeen)
			select {
			case <-written:
			default:
				time.Sleep(2 * time.Millisecond)
				continue
			}
			time.Sleep(20 * time.Millisecond)
		}
		<-written
		assert.Len(t, seen, writers*perWriter, "every event read")
		t.Logf("%s: %d reads, cursor held below a hole at %d; a reader moving to the last seq read would have missed %d of %d",
			e.name, reads, held, writers*perWriter-len(naiveSeen), writers*perWriter)
	})
}

// naiveRead is the reader this exchange must not be: it moves its cursor to
// the last seq it read.
func naiveRead(t *testing.T, x *SQLExchange, cursor int64, seen map[string]bool) int64 {
	rows, err := x.db.QueryContext(t.Context(), x.since, cursor)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var seq, created, now int64
		var body []byte
		require.NoError(t, rows.Scan(&seq, &body, &created, &now))
		ev, ok := decodeExchanged(body)
		require.True(t, ok)
		seen[ev.Generation.ID] = true
		cursor = seq
	}
	require.NoError(t, rows.Err())
	return cursor
}
