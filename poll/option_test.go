package poll

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

// An update callback given to the other kind of wait fails the call before
// anything is sent, instead of being ignored.
func TestUpdateCallbackOfTheOtherKindFails(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	onGeneration := OnUpdate(func(*mediagen.Generation) { t.Error("OnUpdate called") })
	onVoice := OnVoiceUpdate(func(*mediagen.Voice) { t.Error("OnVoiceUpdate called") })

	v, err := Voice(ctx, e.c, "ava-warm-narrator", withClock(e.clock), onGeneration)
	assert.Nil(t, v)
	assert.ErrorContains(t, err, "OnUpdate")
	assert.ErrorContains(t, err, "OnVoiceUpdate", "the message names the option to use")

	g, err := Generation(ctx, e.c, "gen_1", withClock(e.clock), onVoice)
	assert.Nil(t, g)
	assert.ErrorContains(t, err, "OnVoiceUpdate")
	assert.ErrorContains(t, err, "OnUpdate", "the message names the option to use")

	results, err := Generations(ctx, e.c, []string{"gen_1", "gen_2"}, withClock(e.clock), onVoice)
	assert.Nil(t, results)
	assert.ErrorContains(t, err, "OnVoiceUpdate")

	// Joined with the errors of other bad options.
	_, err = Voice(ctx, e.c, "ava-warm-narrator", WithInterval(0), onGeneration)
	assert.ErrorContains(t, err, "WithInterval")
	assert.ErrorContains(t, err, "OnUpdate")

	assert.Zero(t, e.count.requests(), "nothing sent")
	assert.Empty(t, e.clock.waits())

	// Each callback with its own kind of wait is accepted.
	_, err = Voice(ctx, e.c, "ava-warm-narrator", withClock(e.clock), OnVoiceUpdate(func(*mediagen.Voice) {}))
	assert.NoError(t, err)
}

// headerCheck is a middleware that counts the requests it sees and those
// that lack the header X-Wait: nightly.
type headerCheck struct{ seen, missing atomic.Int64 }

func (h *headerCheck) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	h.seen.Add(1)
	if req.Header.Get("X-Wait") != "nightly" {
		h.missing.Add(1)
	}
	return next(req)
}

// Client options carried by WithClientOptions apply to every request of
// every kind of wait, and only to the wait they are given to; several
// carriers add up.
func TestClientOptionsApplyToTheWait(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	h := &headerCheck{}
	opts := []Option{
		WithClientOptions(client.WithHeader("X-Wait", "nightly")),
		WithClientOptions(client.WithMiddleware(h.middleware)),
		withClock(e.clock),
	}

	g := e.image(t)
	e.count.reset()
	_, err := Generation(ctx, e.c, g.ID, opts...)
	require.NoError(t, err)
	assert.Greater(t, e.count.requests(), int64(1))
	assert.Equal(t, e.count.requests(), h.seen.Load(), "Generation: every check")

	ids := []string{e.image(t).ID, e.image(t).ID}
	e.count.reset()
	h.seen.Store(0)
	_, err = Generations(ctx, e.c, ids, opts...)
	require.NoError(t, err)
	assert.Positive(t, e.count.requests())
	assert.Equal(t, e.count.requests(), h.seen.Load(), "Generations: every page and GET")

	v := cloneVoice(t, e)
	e.count.reset()
	h.seen.Store(0)
	_, err = Voice(ctx, e.c, v.ID, opts...)
	require.NoError(t, err)
	assert.Greater(t, e.count.requests(), int64(1))
	assert.Equal(t, e.count.requests(), h.seen.Load(), "Voice: every check")

	assert.Zero(t, h.missing.Load(), "the header went with every request")

	h.seen.Store(0)
	_, err = Generation(ctx, e.c, g.ID, withClock(e.clock))
	require.NoError(t, err)
	assert.Zero(t, h.seen.Load(), "a wait without the option does not get it")
}

// A client timeout carried by WithClientOptions bounds each request of the
// wait in place of the client's.
func TestCarriedTimeoutReachesTheRequests(t *testing.T) {
	e := newEnv(t)
	g := e.image(t)
	const timeout = 42 * time.Minute // far from client.DefaultTimeout
	var seen, bounded atomic.Int64
	mw := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		seen.Add(1)
		if dl, ok := req.Context().Deadline(); ok && time.Until(dl) > timeout-time.Minute && time.Until(dl) <= timeout {
			bounded.Add(1)
		}
		return next(req)
	}
	_, err := Generation(context.Background(), e.c, g.ID, withClock(e.clock),
		WithClientOptions(client.WithTimeout(timeout), client.WithMiddleware(mw)))
	require.NoError(t, err)
	assert.Greater(t, seen.Load(), int64(1))
	assert.Equal(t, seen.Load(), bounded.Load(), "every check had the wait's timeout")
}

// A client option that cannot apply to a call fails the wait before
// anything is sent, as a bad poll option does: not as a wait that gave up
// and could be resumed.
func TestInvalidClientOptionFailsTheWait(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	bad := WithClientOptions(client.WithBaseURL("https://elsewhere.example"))
	check := func(t *testing.T, err error, option string) {
		t.Helper()
		assert.ErrorContains(t, err, "poll.WithClientOptions")
		assert.ErrorContains(t, err, option)
		var gu *GaveUpError
		assert.NotErrorAs(t, err, &gu, "nothing to resume")
	}

	_, err := Generation(ctx, e.c, "gen_1", withClock(e.clock), bad)
	check(t, err, "WithBaseURL")
	results, err := Generations(ctx, e.c, []string{"gen_1", "gen_2"}, withClock(e.clock), bad)
	check(t, err, "WithBaseURL")
	assert.Nil(t, results)
	_, err = Voice(ctx, e.c, "ava-warm-narrator", withClock(e.clock), bad)
	check(t, err, "WithBaseURL")
	_, err = Generation(ctx, e.c, "gen_1", withClock(e.clock), WithClientOptions(client.WithTimeout(-1)))
	check(t, err, "WithTimeout")
	assert.Zero(t, e.count.requests(), "nothing sent")
}

// Every bad option of a wait is reported at once, each by name, and a nil
// option is skipped.
func TestBadOptionsAreJoined(t *testing.T) {
	e := newEnv(t)
	_, err := Generation(context.Background(), e.c, "gen_1", nil, withClock(e.clock),
		WithInterval(0), WithMaxWait(-time.Second), OnUpdate(nil), WithHub(nil), WithSaveTo(""), WithSaveFunc(nil),
		WithClientOptions(client.WithMaxRetries(-1)))
	for _, name := range []string{"poll.WithInterval", "poll.WithMaxWait", "poll.OnUpdate", "poll.WithHub",
		"poll.WithSaveTo", "poll.WithSaveFunc", "poll.WithClientOptions", "WithMaxRetries"} {
		assert.ErrorContains(t, err, name)
	}
	_, err = Generation(context.Background(), e.c, "gen_1", withClock(e.clock), WithSaveTo(t.TempDir()),
		WithSaveFunc(func(context.Context, *mediagen.Generation, string, string) (io.WriteCloser, error) { return nil, nil }))
	assert.ErrorContains(t, err, "WithSaveTo and WithSaveFunc")
	assert.Zero(t, e.count.requests(), "nothing sent")

	g := e.image(t)
	_, err = Generation(context.Background(), e.c, g.ID, nil, withClock(e.clock), nil)
	assert.NoError(t, err)
}

// Several OnUpdate functions are all called, in order; CheckOptions
// reports what a wait would refuse, without waiting.
func TestOnUpdateComposesAndCheckOptions(t *testing.T) {
	var calls []string
	s, err := readOptions(generationWait, []Option{
		OnUpdate(func(*mediagen.Generation) { calls = append(calls, "first") }),
		OnUpdate(func(*mediagen.Generation) { calls = append(calls, "second") }),
	})
	require.NoError(t, err)
	s.onUpdate(&mediagen.Generation{})
	assert.Equal(t, []string{"first", "second"}, calls)

	require.NoError(t, CheckOptions(WithInterval(time.Second), OnUpdate(func(*mediagen.Generation) {})))
	err = CheckOptions(WithMaxWait(0), OnVoiceUpdate(func(*mediagen.Voice) {}), WithClientOptions(client.WithTimeout(-1)))
	assert.ErrorContains(t, err, "poll.WithMaxWait")
	assert.ErrorContains(t, err, "OnVoiceUpdate")
	assert.ErrorContains(t, err, "WithTimeout")
}

// OnVoiceUpdate given twice calls both, as OnUpdate does: the first was
// dropped.
func TestOnVoiceUpdateComposes(t *testing.T) {
	e := newEnv(t)
	v := cloneVoice(t, e)
	var first, second []mediagen.VoiceStatus
	_, err := Voice(context.Background(), e.c, v.ID, withClock(e.clock),
		OnVoiceUpdate(func(v *mediagen.Voice) { first = append(first, v.Status) }),
		OnVoiceUpdate(func(v *mediagen.Voice) { second = append(second, v.Status) }))
	require.NoError(t, err)
	want := []mediagen.VoiceStatus{mediagen.VoiceStatusRunning, mediagen.VoiceStatusDone}
	assert.Equal(t, want, first)
	assert.Equal(t, want, second)
}

// WithSaveTo and WithSaveFunc save generations' outputs: a voice wait,
// which has none, refuses them instead of ignoring them.
func TestVoiceRefusesSaveOptions(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	v, err := Voice(ctx, e.c, "ava-warm-narrator", withClock(e.clock), WithSaveTo(t.TempDir()))
	assert.Nil(t, v)
	assert.ErrorContains(t, err, "WithSaveTo")
	_, err = Voice(ctx, e.c, "ava-warm-narrator", withClock(e.clock),
		WithSaveFunc(func(context.Context, *mediagen.Generation, string, string) (io.WriteCloser, error) { return nil, nil }))
	assert.ErrorContains(t, err, "WithSaveFunc")
	assert.Zero(t, e.count.requests(), "nothing sent")
}
