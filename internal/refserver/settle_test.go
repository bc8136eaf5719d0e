package refserver

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
)

func TestBackgroundTickerSettlesInRealTime(t *testing.T) {
	var mu sync.Mutex
	var got []Event
	srv := New(WithProject(keyA, 10), WithRenderScale(0.005), WithEventSink(func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev)
	}))
	defer srv.Close()
	srv.mu.Lock()
	p := srv.projects[keyA]
	srv.mu.Unlock()
	ctx := contextWithProject(p)
	_, err := srv.CreateGeneration(ctx, createRequest("image/generation", map[string]any{"prompt": "p"}))
	require.NoError(t, err)
	assert.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 1 && got[0].Generation.Status == mediagen.GenerationStatusDone
	}, 5*time.Second, 10*time.Millisecond, "no request needed: the ticker settles")
}

func TestSinkIsNotCalledUnderTheLock(t *testing.T) {
	var balances []float64
	var srv *Server
	clock := NewFakeClock(testStart)
	srv = New(WithClock(clock), WithProject(keyA, 10), WithOutcome(func(string) Outcome { return OutcomeError }),
		WithEventSink(func(ev Event) {
			// Calling back into the server would deadlock if the sink ran
			// under the server's lock.
			balances = append(balances, srv.Balance(ev.ProjectAPIKey))
		}))
	defer srv.Close()
	srv.mu.Lock()
	p := srv.projects[keyA]
	srv.mu.Unlock()
	for range 3 {
		_, err := srv.CreateGeneration(contextWithProject(p), createRequest("image/generation", map[string]any{"prompt": "p"}))
		require.NoError(t, err)
	}
	clock.Advance(time.Minute)
	done := make(chan struct{})
	go func() {
		srv.Settle()
		srv.Settle()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Settle did not return")
	}
	require.Len(t, balances, 3, "exactly one event per generation")
	assert.Equal(t, 10.0, balances[2])
}

func TestMemoryIsBoundedByExpiry(t *testing.T) {
	h := newHarness(t)
	for range 20 {
		h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "p"})
		h.uploadImage(keyA)
		h.reserve(keyA, []byte("x"), "text/plain")
	}
	h.srv.mu.Lock()
	assert.Len(t, h.srv.gens, 20)
	assert.Len(t, h.srv.files, 40)
	h.srv.mu.Unlock()
	h.advance(24 * time.Hour)
	h.srv.mu.Lock()
	assert.Empty(t, h.srv.gens)
	assert.Empty(t, h.srv.files)
	h.srv.mu.Unlock()
}

func TestEventQueueWithoutSinkDropsEvents(t *testing.T) {
	q := newEventQueue(nil)
	q.push([]Event{{Name: "generation.done"}})
	q.wait()
	q.close()
	q.mu.Lock()
	defer q.mu.Unlock()
	assert.Empty(t, q.queue)
}

func TestEventQueueReleasesDispatchedEvents(t *testing.T) {
	var n int
	q := newEventQueue(func(Event) { n++ })
	defer q.close()
	for i := range 100 {
		q.push([]Event{{Name: "generation.done", Generation: &mediagen.Generation{ID: "gen_" + strconv.Itoa(i)}}})
		if i%7 == 0 {
			q.wait()
		}
	}
	q.wait()
	q.mu.Lock()
	defer q.mu.Unlock()
	assert.Equal(t, 100, n)
	for i, ev := range q.queue[:cap(q.queue)] {
		assert.Nil(t, ev.Generation, "slot %d still holds an event", i)
	}
}
