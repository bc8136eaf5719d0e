package poll

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
	"github.com/mediagen/mediagen-go/upload"
)

// fakeClock is a clock whose Sleep moves time at once and records the
// waits; onSleep, when set, runs first (tests advance the reference
// server's clock there).
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	sleeps  []time.Duration
	onSleep func(time.Duration)
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.onSleep != nil {
		f.onSleep(d)
	}
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.sleeps = append(f.sleeps, d)
	f.mu.Unlock()
	return ctx.Err()
}

func (f *fakeClock) waits() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

func (f *fakeClock) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sleeps = nil
}

// withClock makes a wait use c.
func withClock(c client.Clock) Option { return WithClientOptions(client.WithClock(c)) }

// wallClock is a client's default clock.
func wallClock(t *testing.T) client.Clock {
	c, err := client.New("key", client.WithBaseURL("http://127.0.0.1:1"))
	require.NoError(t, err)
	return c.Clock()
}

func TestDeadlineShortensTheLastSleep(t *testing.T) {
	fc := newFakeClock()
	s := &settings{clock: fc, maxWait: 7 * time.Second}
	ctx := context.Background()
	dl := newPacer(ctx, s)
	require.NoError(t, dl.sleep(ctx, 5*time.Second))
	require.NoError(t, dl.sleep(ctx, 5*time.Second))
	assert.ErrorIs(t, dl.sleep(ctx, 5*time.Second), ErrMaxWait)
	assert.Equal(t, []time.Duration{5 * time.Second, 2 * time.Second}, fc.waits())
}

func TestDeadlineHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dl := newPacer(ctx, &settings{clock: wallClock(t)})
	start := time.Now()
	assert.ErrorIs(t, dl.sleep(ctx, time.Hour), context.Canceled)
	assert.Less(t, time.Since(start), time.Second)

	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, wallClock(t).Sleep(ctx, time.Hour), context.DeadlineExceeded)
	assert.NoError(t, wallClock(t).Sleep(context.Background(), time.Millisecond))
}

// Without a clock set in package poll, every kind of wait reads the time
// and sleeps on the client's clock: here one that moves the reference
// server's fake clock, so that renders of real length take no wall time.
func TestWaitsUseTheClientsClock(t *testing.T) {
	ctx := context.Background()
	srv := clienttest.NewServer(t, clienttest.WithRenderScale(1), clienttest.WithBalance(1000))
	fc := newFakeClock()
	fc.onSleep = srv.Advance
	c := srv.Client(client.WithClock(fc))
	start := time.Now()

	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a lighthouse at dusk"})
	require.NoError(t, err)
	got, err := Generation(ctx, c, g.ID)
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, got.Status)
	assert.NotEmpty(t, fc.waits(), "Generation slept on the client's clock")

	fc.reset()
	var ids []string
	for range 3 {
		g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a heron"})
		require.NoError(t, err)
		ids = append(ids, g.ID)
	}
	_, err = Generations(ctx, c, ids)
	require.NoError(t, err)
	assert.NotEmpty(t, fc.waits(), "Generations slept on the client's clock")

	fc.reset()
	wav := media.WAV(30*time.Second, "sample")
	f, err := upload.Reader(ctx, c, bytes.NewReader(wav), int64(len(wav)), "")
	require.NoError(t, err)
	v, err := c.CloneVoice(ctx, client.CloneVoiceParams{Name: "Narrator", Audio: f.ID})
	require.NoError(t, err)
	gotVoice, err := Voice(ctx, c, v.ID)
	require.NoError(t, err)
	assert.Equal(t, mediagen.VoiceStatusDone, gotVoice.Status)
	assert.NotEmpty(t, fc.waits(), "Voice slept on the client's clock")

	// WithMaxWait is measured on it too: an hour that never ends on the
	// server passes at once.
	frozen := newFakeClock()
	c = srv.Client(client.WithClock(frozen))
	g, err = c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a lynx"})
	require.NoError(t, err)
	_, err = Generation(ctx, c, g.ID, WithMaxWait(time.Hour))
	assert.ErrorIs(t, err, ErrMaxWait)
	var total time.Duration
	for _, w := range frozen.waits() {
		total += w
	}
	assert.Equal(t, time.Hour, total)

	assert.Less(t, time.Since(start), 5*time.Second, "no wait took wall time")
}
