package poll

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/webhook"
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

// Two hubs on a real SQLExchange, as two replicas: the event delivered to
// one ends a wait on the other within 250 ms, and a hub started later
// still finds it.
func TestSQLExchangeBetweenHubs(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e xEngine, dsn string) {
		a := NewHub(WithExchange(e.exchange(t, e.open(t, dsn)), 0, func(err error) { t.Error(err) }))
		b := NewHub(WithExchange(e.exchange(t, e.open(t, dsn)), 0, func(err error) { t.Error(err) }))
		t.Cleanup(func() { a.Close(); b.Close() })
		env := newEnv(t, clienttest.WithWallClock())
		done := make(chan *mediagen.Generation)
		voiced := make(chan *mediagen.Voice)
		go func() {
			g, err := Generation(context.Background(), env.c, "gen_x", WithHub(b), WithKind(mediagen.KindImage))
			assert.NoError(t, err)
			done <- g
		}()
		go func() {
			v, err := Voice(context.Background(), env.c, "voice_x", WithHub(b))
			assert.NoError(t, err)
			voiced <- v
		}()
		time.Sleep(150 * time.Millisecond)
		start := time.Now()
		require.NoError(t, a.Deliver(t.Context(), genEvent("gen_x", mediagen.GenerationStatusDone)))
		require.NoError(t, a.Deliver(t.Context(), &webhook.Event{Name: webhook.EventVoiceDone,
			Voice: &mediagen.Voice{ID: "voice_x", Status: mediagen.VoiceStatusDone}}))
		for range 2 {
			select {
			case g := <-done:
				assert.Equal(t, "gen_x", g.ID)
				assert.Less(t, time.Since(start), 250*time.Millisecond)
			case v := <-voiced:
				assert.Equal(t, "voice_x", v.ID)
				assert.Less(t, time.Since(start), 250*time.Millisecond)
			case <-time.After(5 * time.Second):
				t.Fatal("the wait on the other replica did not end")
			}
		}
		assert.Zero(t, env.count.requests())

		// A replica that starts after the event finds it.
		c := NewHub(WithExchange(e.exchange(t, e.open(t, dsn)), 0, nil))
		t.Cleanup(func() { c.Close() })
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		g, err := Generation(ctx, env.c, "gen_x", WithHub(c), WithKind(mediagen.KindImage))
		require.NoError(t, err)
		assert.Equal(t, mediagen.GenerationStatusDone, g.Status)
		assert.Zero(t, env.count.requests())
	})
}
