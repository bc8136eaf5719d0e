package poll

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// counter is a transport that counts API reads.
type counter struct {
	base        http.RoundTripper
	gets, lists atomic.Int64
	mu          sync.Mutex
	limits      []string
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet {
		switch {
		case r.URL.Path == "/v3/generations":
			c.lists.Add(1)
			c.mu.Lock()
			c.limits = append(c.limits, r.URL.Query().Get("limit"))
			c.mu.Unlock()
		case strings.HasPrefix(r.URL.Path, "/v3/generations/"), strings.HasPrefix(r.URL.Path, "/v3/voices/"):
			c.gets.Add(1)
		}
	}
	return c.base.RoundTrip(r)
}

func (c *counter) requests() int64 { return c.gets.Load() + c.lists.Load() }

// env is a reference server, a counting client, and a clock that moves the
// server's fake clock whenever a wait sleeps. The client's own waits (retry
// backoffs) move that clock too, as clienttest's clients do; tests give
// poll's waits e.clock, or a clock of their own, per call.
type env struct {
	srv   *clienttest.Server
	c     *client.Client
	count *counter
	clock *fakeClock
}

func newEnv(t testing.TB, opts ...clienttest.Option) *env {
	t.Helper()
	srv := clienttest.NewServer(t, opts...)
	tr := http.DefaultTransport.(*http.Transport).Clone() // for the server on loopback
	t.Cleanup(tr.CloseIdleConnections)
	count := &counter{base: tr}
	e := &env{srv: srv, c: srv.Client(client.WithHTTPClient(&http.Client{Transport: count})), count: count, clock: newFakeClock()}
	e.clock.onSleep = srv.Advance
	srv.SetBalance(10_000)
	return e
}

// image submits an image generation.
func (e *env) image(t testing.TB) *mediagen.Generation {
	t.Helper()
	g, err := e.c.CreateGeneration(context.Background(), client.ImageGenerationArgs{Prompt: "a lighthouse at dusk"})
	require.NoError(t, err)
	return g
}

// video submits a logo reveal of a freshly uploaded logo.
func (e *env) video(t testing.TB) *mediagen.Generation {
	t.Helper()
	return e.videoOf(t, e.logo(t))
}

// logo uploads a small PNG and returns its file id.
func (e *env) logo(t testing.TB) string {
	t.Helper()
	png := media.PNG(32, 32, "logo")
	f, err := upload.Reader(context.Background(), e.c, bytes.NewReader(png), int64(len(png)), "")
	require.NoError(t, err)
	return f.ID
}

// videoOf submits a logo reveal of the uploaded logo with id logo.
func (e *env) videoOf(t testing.TB, logo string) *mediagen.Generation {
	t.Helper()
	g, err := e.c.CreateGeneration(context.Background(), client.LogoRevealArgs{Image: logo, Prompt: "sparks gather into the logo"})
	require.NoError(t, err)
	return g
}

// reset zeroes the request counts.
func (c *counter) reset() {
	c.gets.Store(0)
	c.lists.Store(0)
	c.mu.Lock()
	c.limits = nil
	c.mu.Unlock()
}

// withJitter replaces the source of jitter, uniform in [0, 1); for tests.
func withJitter(fn func() float64) Option {
	return func(s *settings) error {
		if fn == nil {
			return errors.New("poll: withJitter: needs a non-nil function")
		}
		s.jitter = fn
		return nil
	}
}

// fixedJitter makes every interval the middle of its schedule, so that two
// ways of waiting on the same renders check at the same moments and their
// request counts can be compared exactly.
func fixedJitter() Option { return withJitter(func() float64 { return 0.5 }) }

func TestGenerationDone(t *testing.T) {
	e := newEnv(t)
	g := e.image(t)
	var statuses []mediagen.GenerationStatus
	got, err := Generation(context.Background(), e.c, g.ID, withClock(e.clock), OnUpdate(func(g *mediagen.Generation) {
		statuses = append(statuses, g.Status)
	}))
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, got.Status)
	assert.NotEmpty(t, got.Output.Image)
	assert.Equal(t, got.Output.Image, got.Output.URL())
	assert.True(t, got.Terminal())
	assert.Equal(t, mediagen.GenerationStatusPending, statuses[0])
	assert.Equal(t, mediagen.GenerationStatusDone, statuses[len(statuses)-1])
	for i := 1; i < len(statuses); i++ {
		assert.NotEqual(t, statuses[i-1], statuses[i], "OnUpdate only on changes")
	}
	waits := e.clock.waits()
	require.NotEmpty(t, waits)
	assert.GreaterOrEqual(t, waits[0], time.Second, "images: first check after 1 s")
	assert.LessOrEqual(t, waits[0], 1100*time.Millisecond)
	assert.EqualValues(t, len(waits)+1, e.count.gets.Load(), "one GET per check")
}

func TestGenerationScheduleByKind(t *testing.T) {
	e := newEnv(t, clienttest.WithRenderScale(1)) // real render times, fake clock
	_, err := Generation(context.Background(), e.c, e.image(t).ID, withClock(e.clock))
	require.NoError(t, err)
	imageWaits := e.clock.waits()
	for _, w := range imageWaits {
		assert.GreaterOrEqual(t, w, time.Second)
		assert.LessOrEqual(t, w, 3*time.Second)
	}

	e.clock.reset()
	_, err = Generation(context.Background(), e.c, e.video(t).ID, withClock(e.clock))
	require.NoError(t, err)
	videoWaits := e.clock.waits()
	require.NotEmpty(t, videoWaits)
	assert.GreaterOrEqual(t, videoWaits[0], 5*time.Second, "video: first check after 5 s")
	for _, w := range videoWaits {
		assert.GreaterOrEqual(t, w, 5*time.Second)
		assert.LessOrEqual(t, w, 10*time.Second)
	}
	t.Logf("checks: image %d, video %d", len(imageWaits)+1, len(videoWaits)+1)
}

func TestGenerationRealTime(t *testing.T) {
	e := newEnv(t, clienttest.WithWallClock())
	g := e.image(t)
	start := time.Now()
	got, err := Generation(context.Background(), e.c, g.ID, withClock(wallClock(t)))
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, got.Status)
	assert.Less(t, time.Since(start), 4*time.Second)
}

func TestGenerationFailedIsRefunded(t *testing.T) {
	for _, outcome := range []clienttest.Outcome{clienttest.OutcomeError, clienttest.OutcomeTimeout} {
		t.Run(string(outcome), func(t *testing.T) {
			e := newEnv(t, clienttest.WithOutcome(func(mediagen.Feature) clienttest.Outcome { return outcome }))
			before := e.srv.Balance()
			g := e.image(t)
			assert.Less(t, e.srv.Balance(), before, "charged on submit")

			got, err := Generation(context.Background(), e.c, g.ID, withClock(e.clock))
			require.NotNil(t, got, "the generation comes back with the error")
			assert.EqualValues(t, outcome, got.Status)
			var fe *FailedError
			require.ErrorAs(t, err, &fe)
			assert.Same(t, got, fe.Generation)
			assert.ErrorContains(t, err, g.ID)
			assert.ErrorContains(t, err, "refunded")
			require.NotEmpty(t, got.Error, "the service says why")
			assert.ErrorContains(t, err, got.Error)
			assert.InDelta(t, before, e.srv.Balance(), 1e-9, "the charge was refunded")
		})
	}
}

func TestGenerationDeletedWhileWaiting(t *testing.T) {
	e := newEnv(t)
	g := e.image(t)
	got, err := Generation(context.Background(), e.c, g.ID, withClock(e.clock), OnUpdate(func(g *mediagen.Generation) {
		require.NoError(t, e.c.DeleteGeneration(context.Background(), g.ID))
	}))
	assert.ErrorIs(t, err, ErrGone)
	assert.ErrorIs(t, err, client.ErrNotFound)
	assert.ErrorContains(t, err, g.ID)
	assert.ErrorContains(t, err, "expired or was deleted")
	require.NotNil(t, got, "the last state seen comes back")
	assert.Equal(t, g.ID, got.ID)
}

func TestGenerationExpiredWhileWaiting(t *testing.T) {
	e := newEnv(t)
	g := e.image(t)
	e.clock.onSleep = func(time.Duration) { e.srv.Advance(25 * time.Hour) } // past expiresAt
	_, err := Generation(context.Background(), e.c, g.ID, withClock(e.clock))
	var gone *GoneError
	require.ErrorAs(t, err, &gone)
	assert.Equal(t, g.ID, gone.ID)
	assert.True(t, gone.Seen)
	assert.ErrorIs(t, err, ErrGone)
}

func TestGenerationUnknownID(t *testing.T) {
	e := newEnv(t)
	_, err := Generation(context.Background(), e.c, "gen_does_not_exist", withClock(e.clock))
	assert.ErrorIs(t, err, ErrGone)
	assert.ErrorContains(t, err, "gen_does_not_exist")
	assert.ErrorContains(t, err, "unknown id")
	assert.EqualValues(t, 1, e.count.gets.Load())
}

func TestGenerationCancelled(t *testing.T) {
	e := newEnv(t)
	g := e.image(t)

	// Cancelled mid-wait on the fake clock.
	ctx, cancel := context.WithCancel(context.Background())
	got, err := Generation(ctx, e.c, g.ID, withClock(e.clock), OnUpdate(func(*mediagen.Generation) { cancel() }))
	assert.ErrorIs(t, err, context.Canceled)
	var gu *GaveUpError
	require.ErrorAs(t, err, &gu)
	assert.Equal(t, g.ID, gu.ID)
	assert.Equal(t, string(mediagen.GenerationStatusPending), gu.Status)
	assert.Same(t, got, gu.Last)

	// A real sleep of a second ends as soon as the deadline passes.
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Generation(ctx, e.c, e.image(t).ID, withClock(wallClock(t)))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 900*time.Millisecond)

	// The wait resumes with the id from the error.
	got, err = Generation(context.Background(), e.c, gu.ID, withClock(e.clock))
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, got.Status)
}

func TestGenerationMaxWait(t *testing.T) {
	e := newEnv(t)
	g := e.image(t)
	frozen := newFakeClock() // the server's clock never moves: the render never ends
	got, err := Generation(context.Background(), e.c, g.ID, withClock(frozen), WithMaxWait(10*time.Second))
	assert.ErrorIs(t, err, ErrMaxWait)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	var gu *GaveUpError
	require.ErrorAs(t, err, &gu)
	assert.Equal(t, g.ID, gu.ID)
	assert.Same(t, got, gu.Last)
	var total time.Duration
	for _, w := range frozen.waits() {
		total += w
	}
	assert.Equal(t, 10*time.Second, total, "the last sleep is cut to end at the max wait")
	assert.EqualValues(t, len(frozen.waits())+1, e.count.gets.Load(), "a last check at the max wait")
}

func TestGenerationWithInterval(t *testing.T) {
	e := newEnv(t, clienttest.WithRenderScale(1))
	_, err := Generation(context.Background(), e.c, e.image(t).ID, withClock(e.clock), WithInterval(500*time.Millisecond))
	require.NoError(t, err)
	for _, w := range e.clock.waits() {
		assert.Equal(t, 500*time.Millisecond, w)
	}
}

func TestBadOptions(t *testing.T) {
	e := newEnv(t)
	_, err := Generation(context.Background(), e.c, "g", WithInterval(0), WithMaxWait(-time.Second), OnUpdate(nil))
	assert.ErrorContains(t, err, "WithInterval")
	assert.ErrorContains(t, err, "WithMaxWait")
	assert.ErrorContains(t, err, "OnUpdate")
	_, err = Generation(context.Background(), nil, "g")
	assert.ErrorContains(t, err, "nil client")
	_, err = Generation(context.Background(), e.c, "")
	assert.ErrorContains(t, err, "empty")
	assert.Zero(t, e.count.requests(), "nothing sent")
}

// cloneVoice uploads a 30-second sample and starts a clone.
func cloneVoice(t *testing.T, e *env) *mediagen.Voice {
	t.Helper()
	wav := media.WAV(30*time.Second, "sample")
	f, err := upload.Reader(context.Background(), e.c, bytes.NewReader(wav), int64(len(wav)), "")
	require.NoError(t, err)
	v, err := e.c.CloneVoice(context.Background(), client.CloneVoiceParams{Name: "Narrator", Audio: f.ID})
	require.NoError(t, err)
	return v
}

func TestVoiceDone(t *testing.T) {
	e := newEnv(t)
	v := cloneVoice(t, e)
	var seen []mediagen.VoiceStatus
	got, err := Voice(context.Background(), e.c, v.ID, withClock(e.clock), OnVoiceUpdate(func(v *mediagen.Voice) {
		seen = append(seen, v.Status)
	}))
	require.NoError(t, err)
	assert.Equal(t, mediagen.VoiceStatusDone, got.Status)
	assert.Equal(t, []mediagen.VoiceStatus{mediagen.VoiceStatusRunning, mediagen.VoiceStatusDone}, seen)
	waits := e.clock.waits()
	require.NotEmpty(t, waits)
	for _, w := range waits {
		assert.GreaterOrEqual(t, w, 5*time.Second, "voice clones: 5 to 10 s")
		assert.LessOrEqual(t, w, 10*time.Second)
	}
}

func TestVoiceFailed(t *testing.T) {
	e := newEnv(t, clienttest.WithOutcome(func(mediagen.Feature) clienttest.Outcome { return clienttest.OutcomeError }))
	v := cloneVoice(t, e)
	got, err := Voice(context.Background(), e.c, v.ID, withClock(e.clock))
	var vf *VoiceFailedError
	require.ErrorAs(t, err, &vf)
	assert.Same(t, got, vf.Voice)
	assert.ErrorContains(t, err, v.ID)
	assert.ErrorContains(t, err, "refunded")
}

func TestVoiceCatalogAndDeleted(t *testing.T) {
	e := newEnv(t)
	got, err := Voice(context.Background(), e.c, "ava-warm-narrator", withClock(e.clock))
	require.NoError(t, err, "a catalog voice is ready at once")
	assert.Empty(t, got.Status)
	assert.True(t, got.Terminal())
	assert.Empty(t, e.clock.waits())

	v := cloneVoice(t, e)
	_, err = Voice(context.Background(), e.c, v.ID, withClock(e.clock), OnVoiceUpdate(func(v *mediagen.Voice) {
		require.NoError(t, e.c.DeleteVoice(context.Background(), v.ID))
	}))
	assert.ErrorIs(t, err, ErrGone)
	assert.ErrorContains(t, err, "voice "+v.ID+" was deleted")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Voice(ctx, e.c, cloneVoice(t, e).ID, withClock(e.clock))
	var gu *GaveUpError
	require.ErrorAs(t, err, &gu)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestGenerationsMixedOutcomes(t *testing.T) {
	var n atomic.Int64
	e := newEnv(t, clienttest.WithOutcome(func(mediagen.Feature) clienttest.Outcome {
		if n.Add(1)%10 == 0 {
			return clienttest.OutcomeError
		}
		return clienttest.OutcomeDone
	}))
	ids := make([]string, 30)
	for i := range ids {
		ids[i] = e.image(t).ID
	}
	gone := e.image(t)
	require.NoError(t, e.c.DeleteGeneration(context.Background(), gone.ID))
	ids = append(ids, gone.ID, "gen_unknown", ids[0]) // a deleted id, an unknown one, a duplicate

	updates := map[string]int{}
	results, err := Generations(context.Background(), e.c, ids, withClock(e.clock), OnUpdate(func(g *mediagen.Generation) {
		updates[g.ID]++
	}))
	require.Len(t, results, len(ids))
	require.Error(t, err)
	joined, ok := err.(interface{ Unwrap() []error })
	require.True(t, ok, "one error per id, joined")
	assert.Len(t, joined.Unwrap(), 5, "three failed renders, the deleted id, the unknown id; the duplicate once")

	// Each result can be examined on its own, which errors.As on the joined
	// error cannot do beyond the first match.
	var failed, goneIDs []string
	for i, r := range results {
		assert.Equal(t, ids[i], r.ID, "results in the order of ids")
		if r.Err != nil {
			assert.ErrorIs(t, err, r.Err, "the joined error holds each result's error")
		}
		var fe *FailedError
		var ge *GoneError
		switch {
		case r.Err == nil:
			require.NotNil(t, r.Generation)
			assert.Equal(t, mediagen.GenerationStatusDone, r.Generation.Status)
		case errors.As(r.Err, &fe):
			failed = append(failed, r.ID)
			assert.Same(t, r.Generation, fe.Generation)
			assert.Equal(t, mediagen.GenerationStatusError, r.Generation.Status)
		case errors.As(r.Err, &ge):
			goneIDs = append(goneIDs, r.ID)
			assert.Equal(t, r.ID, ge.ID)
			assert.False(t, ge.Seen)
			assert.Nil(t, r.Generation, "a generation never seen has none")
		default:
			t.Errorf("unexpected error for %s: %v", r.ID, r.Err)
		}
	}
	assert.Equal(t, []string{ids[9], ids[19], ids[29]}, failed, "every tenth render fails")
	assert.Equal(t, []string{gone.ID, "gen_unknown"}, goneIDs)
	for i, id := range ids[:30] {
		assert.True(t, results[i].Generation.Terminal())
		assert.GreaterOrEqual(t, updates[id], 2, "first sight and the terminal state")
	}
	last := results[len(ids)-1]
	assert.Same(t, results[0].Generation, last.Generation, "a duplicate id shares its result")
	assert.Equal(t, results[0].Err, last.Err)
	for _, limit := range e.count.limits {
		assert.Equal(t, "100", limit, "pages of 100")
	}
}

// TestGenerationsPageScan checks which pages one round reads. 250 finished
// images fill three pages of 100, newest first: page 1 holds imgs[150:],
// page 2 imgs[50:150], page 3 imgs[:50]. A further page is read only while
// the pages so far held at least as many waited ids as pages were read
// after the first; ids the pages did not show cost one GET each, so a round
// costs at most one request more than the ids waited on.
func TestGenerationsPageScan(t *testing.T) {
	e := newEnv(t)
	imgs := make([]string, 250)
	for i := range imgs {
		imgs[i] = e.image(t).ID
	}
	e.srv.Advance(time.Minute) // every render is done: each wait is one round
	tests := []struct {
		name        string
		ids         []string
		lists, gets int64
	}{
		{"all on the first page", imgs[240:], 1, 0},
		{"none on the first page", imgs[:5], 1, 5},
		{"one on the first page pays for the second", []string{imgs[249], imgs[100], imgs[0], imgs[1], imgs[2]}, 3, 0},
		{"none on the second page stops the scan", []string{imgs[249], imgs[0], imgs[1], imgs[2]}, 2, 3},
		{"newest and oldest", append(slices.Clone(imgs[245:]), imgs[:5]...), 3, 0},
		{"one recent, the rest deep", []string{imgs[200], imgs[0], imgs[1], imgs[2], imgs[3], imgs[4]}, 2, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.count.reset()
			e.clock.reset()
			results, err := Generations(context.Background(), e.c, tt.ids, withClock(e.clock))
			require.NoError(t, err)
			for i, r := range results {
				assert.Equal(t, tt.ids[i], r.ID)
				assert.Equal(t, mediagen.GenerationStatusDone, r.Generation.Status)
			}
			assert.Empty(t, e.clock.waits(), "one round")
			assert.Equal(t, tt.lists, e.count.lists.Load(), "pages read")
			assert.Equal(t, tt.gets, e.count.gets.Load(), "single GETs")
			assert.LessOrEqual(t, e.count.requests(), int64(len(tt.ids)+1), "at most one request more than ids")
		})
	}
}

func TestGenerationsGiveUp(t *testing.T) {
	e := newEnv(t)
	ids := []string{e.image(t).ID, e.image(t).ID}
	frozen := newFakeClock()
	results, err := Generations(context.Background(), e.c, ids, withClock(frozen), WithMaxWait(5*time.Second))
	assert.ErrorIs(t, err, ErrMaxWait)
	for i, id := range ids {
		assert.ErrorContains(t, err, id, "each failure carries its id")
		var gu *GaveUpError
		require.ErrorAs(t, results[i].Err, &gu)
		assert.Equal(t, id, gu.ID)
		assert.ErrorIs(t, results[i].Err, ErrMaxWait)
		require.NotNil(t, results[i].Generation, "the last state seen")
		assert.Same(t, results[i].Generation, gu.Last)
		assert.Equal(t, mediagen.GenerationStatusPending, results[i].Generation.Status)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	results, err = Generations(ctx, e.c, ids, withClock(e.clock))
	assert.ErrorIs(t, err, context.Canceled)
	require.Len(t, results, len(ids))
	for _, r := range results {
		assert.ErrorIs(t, r.Err, context.Canceled)
	}

	results, err = Generations(context.Background(), e.c, nil)
	assert.NoError(t, err)
	assert.Empty(t, results)

	results, err = Generations(context.Background(), e.c, []string{ids[0], ""})
	assert.ErrorContains(t, err, "empty generation id")
	assert.Nil(t, results)
}

// TestGenerationsCostsFarFewerRequests waits on 100 image generations
// twice, from submission to done with renders of real length on the fake
// clock: once with Generations, once with 100 single waits (each submitted
// just before its wait, so each costs what it would alone).
func TestGenerationsCostsFarFewerRequests(t *testing.T) {
	const n = 100
	batch := newEnv(t, clienttest.WithRenderScale(1))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = batch.image(t).ID
	}
	results, err := Generations(context.Background(), batch.c, ids, withClock(batch.clock))
	require.NoError(t, err)
	for _, r := range results {
		assert.Equal(t, mediagen.GenerationStatusDone, r.Generation.Status)
	}

	single := newEnv(t, clienttest.WithRenderScale(1))
	for range n {
		g, err := Generation(context.Background(), single.c, single.image(t).ID, withClock(single.clock))
		require.NoError(t, err)
		assert.Equal(t, mediagen.GenerationStatusDone, g.Status)
	}

	t.Logf("100 images: Generations made %d requests, 100 single waits made %d", batch.count.requests(), single.count.requests())
	assert.GreaterOrEqual(t, single.count.requests(), int64(2*n), "a single wait checks at least twice")
	assert.LessOrEqual(t, batch.count.requests()*20, single.count.requests(), "at least 20 times fewer requests")
}

// TestGenerationsFreshVideosCostATenth waits on 100 videos submitted
// together, rendering for their real length on the fake clock, and compares
// the requests with 100 separate waits on such videos (each submitted just
// before its wait, so each costs what it would alone).
func TestGenerationsFreshVideosCostATenth(t *testing.T) {
	const n = 100
	batch := newEnv(t, clienttest.WithRenderScale(1))
	logo := batch.logo(t)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = batch.videoOf(t, logo).ID
	}
	batch.count.reset()
	results, err := Generations(context.Background(), batch.c, ids, withClock(batch.clock))
	require.NoError(t, err)
	for _, r := range results {
		assert.Equal(t, mediagen.GenerationStatusDone, r.Generation.Status)
		assert.NotEmpty(t, r.Generation.Output.Video)
		assert.NotEmpty(t, r.Generation.Output.Poster)
	}
	rounds := int64(len(batch.clock.waits()) + 1)

	single := newEnv(t, clienttest.WithRenderScale(1))
	logo = single.logo(t)
	single.count.reset()
	for range n {
		g, err := Generation(context.Background(), single.c, single.videoOf(t, logo).ID, withClock(single.clock))
		require.NoError(t, err)
		assert.Equal(t, mediagen.GenerationStatusDone, g.Status)
	}

	t.Logf("100 fresh videos: Generations made %d requests (%d lists, %d GETs) in %d rounds; 100 separate waits made %d",
		batch.count.requests(), batch.count.lists.Load(), batch.count.gets.Load(), rounds, single.count.requests())
	assert.GreaterOrEqual(t, single.count.requests(), int64(2*n), "a single wait checks at least twice")
	assert.LessOrEqual(t, batch.count.requests()*10, single.count.requests(), "at most a tenth of the requests")
	assert.Equal(t, rounds, batch.count.requests(), "one page a round: all 100 are on the newest page")
}

// TestGenerationsBuriedVideosCostNoMoreThanSeparateWaits waits on 100
// videos under 10,000 newer generations of the same feature, so that the
// filtered list shows none of them on its first page. Each round then costs
// one page plus one GET per video still rendering: at most the separate
// waits' requests plus one page a round. Both sides check at the same
// moments (fixedJitter), so the bound is compared exactly.
func TestGenerationsBuriedVideosCostNoMoreThanSeparateWaits(t *testing.T) {
	const n = 100
	newer := 10_000
	if raceEnabled || testing.Short() {
		// Every request of the reference server settles every generation,
		// so submitting is quadratic: 10,000 take 2 s, 20 s with the race
		// detector. 2,000 are still 20 pages deep.
		newer = 2_000
	}
	ctx := context.Background()
	batch := newEnv(t, clienttest.WithRenderScale(1))
	batch.srv.SetBalance(10_000_000)
	logo := batch.logo(t)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = batch.videoOf(t, logo).ID
	}
	start := time.Now()
	submitMany(t, batch.c, newer, client.LogoRevealArgs{Image: logo, Prompt: "a newer reveal"})
	t.Logf("submitted %d newer videos in %v", newer, time.Since(start).Round(time.Millisecond))
	first, err := batch.c.ListGenerations(ctx, client.ListParams{Feature: mediagen.FeatureVideoLogoReveal, Limit: 100})
	require.NoError(t, err)
	for _, g := range first.Generations {
		require.NotContains(t, ids, g.ID, "the waited videos are not on the first page")
	}

	batch.count.reset()
	start = time.Now()
	results, err := Generations(ctx, batch.c, ids, withClock(batch.clock), fixedJitter())
	require.NoError(t, err)
	for _, r := range results {
		assert.Equal(t, mediagen.GenerationStatusDone, r.Generation.Status)
	}
	rounds := int64(len(batch.clock.waits()) + 1)
	t.Logf("waited in %v", time.Since(start).Round(time.Millisecond))

	single := newEnv(t, clienttest.WithRenderScale(1))
	logo = single.logo(t)
	single.count.reset()
	for range n {
		g, err := Generation(ctx, single.c, single.videoOf(t, logo).ID, withClock(single.clock), fixedJitter())
		require.NoError(t, err)
		assert.Equal(t, mediagen.GenerationStatusDone, g.Status)
	}

	t.Logf("100 videos under %d newer: Generations made %d requests (%d lists, %d GETs) in %d rounds; 100 separate waits made %d",
		newer, batch.count.requests(), batch.count.lists.Load(), batch.count.gets.Load(), rounds, single.count.requests())
	assert.Equal(t, rounds, batch.count.lists.Load(), "one page a round")
	assert.LessOrEqual(t, batch.count.requests(), single.count.requests()+rounds, "separate waits plus one page a round")
}

// submitMany submits n generations of args, a few at a time.
func submitMany(t testing.TB, c *client.Client, n int, args client.Args) {
	t.Helper()
	const workers = 8
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if _, err := c.CreateGeneration(context.Background(), args); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
}

func TestGenerationsDeepIDCostsOneGetAndOnePagePerRound(t *testing.T) {
	e := newEnv(t, clienttest.WithRenderScale(1)) // videos render for a while
	e.srv.SetBalance(1_000_000)
	video := e.video(t)
	for range 250 { // newer videos of the same feature, so even the filtered list shows it on the third page
		_, err := e.c.CreateGeneration(context.Background(), client.LogoRevealArgs{Image: video.Params["image"].(string), Prompt: "again"})
		require.NoError(t, err)
	}
	e.count.reset()
	results, err := Generations(context.Background(), e.c, []string{video.ID}, withClock(e.clock))
	require.NoError(t, err)
	require.Len(t, results, 1)
	assert.Equal(t, mediagen.GenerationStatusDone, results[0].Generation.Status)
	rounds := int64(len(e.clock.waits()) + 1)
	require.Greater(t, rounds, int64(1), "the video took more than one round")
	assert.Equal(t, rounds, e.count.lists.Load(), "the first page only, not three")
	assert.Equal(t, rounds, e.count.gets.Load(), "one GET a round")
}

// flaky answers 503 to the GET of a generation while fail is above zero,
// counting down, and passes everything else on.
type flaky struct {
	base http.RoundTripper
	fail atomic.Int64
}

func (f *flaky) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v3/generations/") && f.fail.Add(-1) >= 0 {
		if r.Body != nil {
			r.Body.Close()
		}
		return &http.Response{
			StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
			Body: io.NopCloser(strings.NewReader(`{"error":{"code":"unavailable","message":"try again"}}`)),
		}, nil
	}
	return f.base.RoundTrip(r)
}

// The decision documented in the package: a check that fails is retried by
// the client; only an error that outlasts the client's retries ends the wait.
func TestGenerationTransientFailureDuringWait(t *testing.T) {
	t.Run("absorbed by the client's retries", func(t *testing.T) {
		e := newEnv(t)
		g := e.image(t)
		tr := &flaky{base: e.count.base}
		c := e.srv.Client(client.WithHTTPClient(&http.Client{Transport: tr}), client.WithRetryWait(time.Millisecond, 5*time.Millisecond))
		e.clock.onSleep = func(d time.Duration) {
			e.srv.Advance(d)
			if d >= time.Second { // a poll interval, not a retry's backoff
				tr.fail.Store(1) // one 503 on each later check
			}
		}
		got, err := Generation(context.Background(), c, g.ID, withClock(e.clock))
		require.NoError(t, err)
		assert.Equal(t, mediagen.GenerationStatusDone, got.Status)
	})
	t.Run("outlasting the retries ends the wait", func(t *testing.T) {
		e := newEnv(t)
		g := e.image(t)
		tr := &flaky{base: e.count.base}
		c := e.srv.Client(client.WithHTTPClient(&http.Client{Transport: tr}), client.WithMaxRetries(0))
		e.clock.onSleep = func(d time.Duration) { e.srv.Advance(d); tr.fail.Store(1) }
		got, err := Generation(context.Background(), c, g.ID, withClock(e.clock))
		var gave *GaveUpError
		require.ErrorAs(t, err, &gave)
		assert.Equal(t, g.ID, gave.ID)
		var apiErr *client.APIError
		require.ErrorAs(t, err, &apiErr, "unwraps to the client's error")
		assert.Equal(t, http.StatusServiceUnavailable, apiErr.StatusCode)
		require.NotNil(t, got, "the last state seen comes back")
		assert.Equal(t, g.ID, got.ID)
	})
}

// raceEnabled is set when the race detector is on (race_test.go).
var raceEnabled bool
