package poll

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/webhook"
)

// hubEnv is a server on the wall clock delivering webhooks to a receiver
// that feeds a hub, and a counting client that asks for them.
func hubEnv(t *testing.T, h *Hub) *env {
	t.Helper()
	e := newEnv(t, clienttest.WithWallClock())
	deliver, err := webhook.Handler(e.srv.WebhookSecret(), h.Deliver)
	require.NoError(t, err)
	recv := httptest.NewServer(deliver)
	t.Cleanup(recv.Close)
	e.c = e.srv.Client(client.WithHTTPClient(&http.Client{Transport: e.count}), client.WithWebhookURL(recv.URL))
	return e
}

// A verified terminal event ends the wait: no request beyond the create.
func TestHubEventEndsTheWait(t *testing.T) {
	h := NewHub()
	e := hubEnv(t, h)
	ctx := t.Context()
	g := e.image(t)
	start := time.Now()
	got, err := Generation(ctx, e.c, g.ID, WithHub(h), WithKind(g.Kind))
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, got.Status)
	assert.NotEmpty(t, got.Output.Image, "the event carries the same body as a GET")
	assert.Zero(t, e.count.requests(), "no GET: the event ended the wait")
	assert.Less(t, time.Since(start), 5*time.Second)

	// Many at once, and a voice.
	ids := []string{e.image(t).ID, e.image(t).ID, e.image(t).ID}
	results, err := Generations(ctx, e.c, ids, WithHub(h), WithKind(mediagen.KindImage))
	require.NoError(t, err)
	for _, r := range results {
		assert.Equal(t, mediagen.GenerationStatusDone, r.Generation.Status)
	}
	assert.Zero(t, e.count.requests(), "no list, no GET")
}

// An event that arrived before the wait began ends it at once.
func TestHubRemembersEarlyEvents(t *testing.T) {
	h := NewHub()
	e := newEnv(t)
	done := &mediagen.Generation{ID: "gen_early", Status: mediagen.GenerationStatusDone, Kind: mediagen.KindImage}
	require.NoError(t, h.Deliver(t.Context(), &webhook.Event{Name: webhook.EventGenerationDone, Generation: done}))
	got, err := Generation(t.Context(), e.c, "gen_early", WithHub(h), withClock(e.clock))
	require.NoError(t, err)
	assert.Same(t, done, got)
	assert.Zero(t, e.count.requests())
	assert.Empty(t, e.clock.waits())

	failed := &mediagen.Generation{ID: "gen_failed", Status: mediagen.GenerationStatusError, Error: "boom"}
	require.NoError(t, h.Deliver(t.Context(), &webhook.Event{Name: webhook.EventGenerationError, Generation: failed}))
	got, err = Generation(t.Context(), e.c, "gen_failed", WithHub(h), withClock(e.clock))
	var fe *FailedError
	require.ErrorAs(t, err, &fe)
	assert.Same(t, failed, got)
}

// Foreign and non-terminal events never end a wait; with every event lost
// the backstop finds the generation.
func TestHubBackstop(t *testing.T) {
	h := NewHub()
	e := newEnv(t)
	ctx := t.Context()
	g := e.image(t)
	for _, ev := range []*webhook.Event{
		{Name: webhook.EventGenerationDone, Generation: &mediagen.Generation{ID: "gen_someone_else", Status: mediagen.GenerationStatusDone}},
		{Name: "generation.progress", Generation: &mediagen.Generation{ID: g.ID, Status: mediagen.GenerationStatusRunning}},
		{Name: webhook.EventVoiceDone, Voice: &mediagen.Voice{ID: g.ID, Status: mediagen.VoiceStatusDone}},
		nil,
	} {
		require.NoError(t, h.Deliver(ctx, ev))
	}
	got, err := Generation(ctx, e.c, g.ID, WithHub(h), WithKind(mediagen.KindImage), withClock(e.clock))
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, got.Status)
	assert.EqualValues(t, 1, e.count.requests(), "one backstop check")
	assert.Equal(t, []time.Duration{10 * time.Second}, e.clock.waits(), "the first check when an image is normally done")

	// An unknown kind waits as long as a video before its first check;
	// WithMaxWait still bounds the wait, its last check at the deadline.
	slow := newEnv(t, clienttest.WithRenderScale(1))
	v := slow.video(t)
	_, err = Generation(ctx, slow.c, v.ID, WithHub(h), withClock(slow.clock), WithMaxWait(30*time.Second))
	assert.ErrorIs(t, err, ErrMaxWait)
	assert.Equal(t, []time.Duration{30 * time.Second}, slow.clock.waits())
	assert.EqualValues(t, 1, slow.count.requests(), "the check at the deadline")

	// A generation that is gone says so.
	_, err = Generation(ctx, e.c, "gen_missing", WithHub(h), withClock(e.clock), WithKind(mediagen.KindImage))
	assert.ErrorIs(t, err, ErrGone)
}

// Duplicated and late events change nothing; a full hub forgets the oldest.
func TestHubDuplicatesAndSize(t *testing.T) {
	h := NewHub(WithHubSize(2))
	ctx := t.Context()
	ev := func(id string) *webhook.Event {
		return &webhook.Event{Name: webhook.EventGenerationDone, Generation: &mediagen.Generation{ID: id, Status: mediagen.GenerationStatusDone}}
	}
	for _, id := range []string{"a", "a", "b", "c", "c"} {
		require.NoError(t, h.Deliver(ctx, ev(id)))
	}
	_, ok := h.lookup(hubKey{id: "a"})
	assert.False(t, ok, "the oldest was dropped")
	for _, id := range []string{"b", "c"} {
		_, ok := h.lookup(hubKey{id: id})
		assert.True(t, ok, id)
	}
	assert.Len(t, h.order, 2)
	assert.Panics(t, func() { NewHub(WithHubSize(0)) })
	assert.Panics(t, func() { NewHub(WithHubRetention(-time.Second)) })
}

// A hub answers deliveries without waiting for the waits it wakes, and many
// waits on one id all end.
func TestHubWakesEveryWaiter(t *testing.T) {
	h := NewHub()
	e := newEnv(t, clienttest.WithWallClock())
	id := "gen_shared"
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			g, err := Generation(context.Background(), e.c, id, WithHub(h), WithKind(mediagen.KindImage))
			assert.NoError(t, err)
			assert.Equal(t, id, g.ID)
		})
	}
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	require.NoError(t, h.Deliver(t.Context(), &webhook.Event{Name: webhook.EventGenerationDone,
		Generation: &mediagen.Generation{ID: id, Status: mediagen.GenerationStatusDone}}))
	assert.Less(t, time.Since(start), 10*time.Millisecond, "Deliver does not wait for the waits")
	wg.Wait()
	assert.Zero(t, e.count.requests())
}

// memExchange is an Exchange in memory, as a shared table would be.
type memExchange struct {
	mu  sync.Mutex
	evs []*webhook.Event
}

func (m *memExchange) Publish(_ context.Context, ev *webhook.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.evs = append(m.evs, ev)
	return nil
}

func (m *memExchange) Since(_ context.Context, cursor int64) ([]*webhook.Event, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*webhook.Event(nil), m.evs[cursor:]...), int64(len(m.evs)), nil
}

// The webhook lands on one replica's hub; a wait on another's ends.
func TestHubExchangeAcrossReplicas(t *testing.T) {
	x := &memExchange{}
	receiver := NewHub(WithExchange(x, 10*time.Millisecond, nil))
	waiter := NewHub(WithExchange(x, 10*time.Millisecond, nil))
	t.Cleanup(func() { receiver.Close(); waiter.Close() })
	e := newEnv(t, clienttest.WithWallClock())
	done := make(chan *mediagen.Generation)
	go func() {
		g, err := Generation(context.Background(), e.c, "gen_x", WithHub(waiter), WithKind(mediagen.KindImage))
		assert.NoError(t, err)
		done <- g
	}()
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	require.NoError(t, receiver.Deliver(t.Context(), &webhook.Event{Name: webhook.EventGenerationDone,
		Generation: &mediagen.Generation{ID: "gen_x", Status: mediagen.GenerationStatusDone}}))
	select {
	case g := <-done:
		assert.Equal(t, "gen_x", g.ID)
		assert.Less(t, time.Since(start), 250*time.Millisecond)
	case <-time.After(5 * time.Second):
		t.Fatal("the wait on the other replica did not end")
	}
	assert.Zero(t, e.count.requests())
	require.NoError(t, waiter.Close())
	require.NoError(t, waiter.Close(), "twice is fine")
}
