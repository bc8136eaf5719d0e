package hub

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/hubtest"
	"github.com/mediagen/mediagen-go/webhook"
)

// Duplicated and late events change nothing; a full hub forgets the oldest.
func TestHubDuplicatesAndSize(t *testing.T) {
	h, err := New(WithSize(2))
	require.NoError(t, err)
	ctx := t.Context()
	ev := func(id string) *webhook.Event {
		return &webhook.Event{Name: webhook.EventGenerationDone, Generation: &mediagen.Generation{ID: id, Status: mediagen.GenerationStatusDone}}
	}
	for _, id := range []string{"a", "a", "b", "c", "c"} {
		require.NoError(t, h.Deliver(ctx, ev(id)))
	}
	_, ok := h.Lookup(Key{ID: "a"})
	assert.False(t, ok, "the oldest was dropped")
	for _, id := range []string{"b", "c"} {
		_, ok := h.Lookup(Key{ID: id})
		assert.True(t, ok, id)
	}
	assert.Len(t, h.order, 2)
	_, err = New(WithSize(0), WithRetention(-time.Second), WithExchange(nil, -1, nil), nil)
	for _, want := range []string{"hub.WithSize(0)", "hub.WithRetention(-1s)", "hub.WithExchange: nil exchange"} {
		assert.ErrorContains(t, err, want, "a bad option is an error, not a panic")
	}
}

func done(id string) *webhook.Event {
	return &webhook.Event{Name: webhook.EventGenerationDone, Generation: &mediagen.Generation{ID: id, Status: mediagen.GenerationStatusDone}}
}

// A watch's context ends when a terminal event for one of its keys
// arrives, and only then; Lookup then holds that very event.
func TestWatch(t *testing.T) {
	h, err := New()
	require.NoError(t, err)
	ctx := t.Context()
	wctx, stop := h.Watch(ctx, Key{ID: "gen_a"}, Key{ID: "voice_a", Voice: true})
	defer stop()
	for _, ev := range []*webhook.Event{
		done("gen_other"),
		{Name: "generation.progress", Generation: &mediagen.Generation{ID: "gen_a", Status: mediagen.GenerationStatusRunning}},
		{Name: webhook.EventVoiceDone, Voice: &mediagen.Voice{ID: "gen_a", Status: mediagen.VoiceStatusDone}},
		nil,
	} {
		require.NoError(t, h.Deliver(ctx, ev))
	}
	require.NoError(t, wctx.Err(), "no event for the watched keys yet")
	_, ok := h.Lookup(Key{ID: "gen_a"})
	assert.False(t, ok)

	ev := &webhook.Event{Name: webhook.EventVoiceDone, Voice: &mediagen.Voice{ID: "voice_a", Status: mediagen.VoiceStatusDone}}
	require.NoError(t, h.Deliver(ctx, ev))
	assert.ErrorIs(t, wctx.Err(), context.Canceled, "the event ended the watch")
	got, ok := h.Lookup(Key{ID: "voice_a", Voice: true})
	require.True(t, ok)
	assert.Same(t, ev, got)
	_, ok = h.Lookup(Key{ID: "voice_a"})
	assert.False(t, ok, "a generation's key is not a voice's")

	// An ended watch is forgotten; its parent ending ends it too.
	stop()
	h.mu.Lock()
	assert.Empty(t, h.watchers)
	h.mu.Unlock()
	parent, cancel := context.WithCancel(ctx)
	wctx, stop = h.Watch(parent, Key{ID: "gen_b"})
	defer stop()
	cancel()
	assert.Error(t, wctx.Err())
}

// The webhook lands on one replica's hub; a watch on another's ends, and
// many watches on one id all end.
func TestExchangeAcrossReplicas(t *testing.T) {
	x := &hubtest.Exchange{}
	receiver, err := New(WithExchange(x, 10*time.Millisecond, nil))
	require.NoError(t, err)
	waiter, err := New(WithExchange(x, 10*time.Millisecond, nil))
	require.NoError(t, err)
	t.Cleanup(func() { receiver.Close(); waiter.Close() })
	var watches []context.Context
	for range 20 {
		wctx, stop := waiter.Watch(t.Context(), Key{ID: "gen_x"})
		defer stop()
		watches = append(watches, wctx)
	}
	start := time.Now()
	require.NoError(t, receiver.Deliver(t.Context(), done("gen_x")))
	for _, wctx := range watches {
		select {
		case <-wctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the watch on the other replica did not end")
		}
	}
	assert.Less(t, time.Since(start), 250*time.Millisecond)
	assert.Equal(t, 1, x.Len(), "untraced watches share nothing: the exchange holds the event alone")
	got, ok := waiter.Lookup(Key{ID: "gen_x"})
	require.True(t, ok)
	assert.Equal(t, "gen_x", got.Generation.ID)
	require.NoError(t, waiter.Close())
	require.NoError(t, waiter.Close(), "twice is fine")
}

// The trace notes of other replicas' waits are kept for deliveries, the
// last Size of them; a note neither ends a watch nor reads as an event.
func TestTraceNotes(t *testing.T) {
	x := &hubtest.Exchange{}
	h, err := New(WithSize(2), WithExchange(x, 5*time.Millisecond, nil))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	wctx, stop := h.Watch(t.Context(), Key{ID: "gen_a"})
	defer stop()
	tp := "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01"
	for _, id := range []string{"gen_a", "gen_b", "gen_c"} {
		raw := []byte(`{"event":"mediagen.wait","generation":{"id":"` + id + `"}}`)
		ev := &webhook.Event{Name: watchEvent, Generation: &mediagen.Generation{ID: id}, Raw: raw}
		require.NoError(t, x.Publish(t.Context(), withTrace(ev, tp)))
	}
	require.Eventually(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.traces["gen_c"] == tp
	}, 5*time.Second, 5*time.Millisecond)
	h.mu.Lock()
	assert.Equal(t, map[string]string{"gen_b": tp, "gen_c": tp}, h.traces, "the oldest note was dropped")
	h.mu.Unlock()
	assert.NoError(t, wctx.Err(), "a note does not end a watch")
	_, ok := h.Lookup(Key{ID: "gen_b"})
	assert.False(t, ok, "a note is not an event")
}

// stuckExchange is an exchange whose reads hang until their context ends,
// as a query does on a database that stopped answering.
type stuckExchange struct{ reading chan struct{} }

func (x stuckExchange) Publish(context.Context, *webhook.Event) error { return nil }

func (x stuckExchange) Since(ctx context.Context, cursor int64) ([]*webhook.Event, int64, error) {
	close(x.reading)
	<-ctx.Done()
	return nil, cursor, ctx.Err()
}

// Close returns while a read of the exchange hangs, and reports no error
// for the read it cut off.
func TestCloseCutsOffAHangingRead(t *testing.T) {
	x := stuckExchange{reading: make(chan struct{})}
	var errs []error
	h, err := New(WithExchange(x, time.Millisecond, func(err error) { errs = append(errs, err) }))
	require.NoError(t, err)
	<-x.reading
	closed := make(chan struct{})
	go func() {
		assert.NoError(t, h.Close())
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close still waits for the exchange's read")
	}
	assert.Empty(t, errs)
}
