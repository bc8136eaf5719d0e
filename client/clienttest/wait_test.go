package clienttest_test

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
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/upload"
)

// A user's test of "submit, then wait with poll's defaults" finishes in
// well under a second of wall time for every kind, with no clock work.
func TestWaitsWithPollDefaultsFinishAtOnce(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.WithRenderScale(1)) // renders at their real length
	c := srv.Client()
	ctx := t.Context()
	png := media.PNG(64, 64, "logo")
	logo, err := upload.Reader(ctx, c, bytes.NewReader(png), int64(len(png)), "image/png")
	require.NoError(t, err)
	wav := media.WAV(30*time.Second, "voice")
	sample, err := upload.Reader(ctx, c, bytes.NewReader(wav), int64(len(wav)), "audio/wav")
	require.NoError(t, err)

	for _, args := range []client.Args{
		client.ImageGenerationArgs{Prompt: "a lighthouse at dusk"},
		client.VoiceoverArgs{VoiceID: "ava-warm-narrator", Script: "Hello there."},
		client.LogoRevealArgs{Image: logo.ID, Prompt: "sparks"},
	} {
		t.Run(string(args.Feature()), func(t *testing.T) {
			start := time.Now()
			g, err := c.CreateGeneration(ctx, args)
			require.NoError(t, err)
			g, err = poll.Generation(ctx, c, g.ID)
			require.NoError(t, err)
			assert.Equal(t, mediagen.GenerationStatusDone, g.Status)
			assert.Less(t, time.Since(start), time.Second, "wall time")
		})
	}
	t.Run("voice clone", func(t *testing.T) {
		start := time.Now()
		v, err := c.CloneVoice(ctx, client.CloneVoiceParams{Name: "mine", Audio: sample.ID})
		require.NoError(t, err)
		v, err = poll.Voice(ctx, c, v.ID)
		require.NoError(t, err)
		assert.Equal(t, mediagen.VoiceStatusDone, v.Status)
		assert.Less(t, time.Since(start), time.Second, "wall time")
	})
}

// Only waits move time: a render stays observable mid-flight.
func TestRendersAreObservableMidFlight(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.WithRenderScale(1))
	c := srv.Client()
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "p"})
	require.NoError(t, err)
	g, err = c.GetGeneration(t.Context(), g.ID)
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusPending, g.Status)
	assert.Equal(t, clienttest.StartTime, srv.Now(), "a GET does not move the clock")

	// Advance in small steps: the render passes through running.
	var steps []mediagen.GenerationStatus
	for i := 0; i < 1000 && !g.Terminal(); i++ {
		srv.Advance(50 * time.Millisecond)
		g, err = c.GetGeneration(t.Context(), g.ID)
		require.NoError(t, err)
		if len(steps) == 0 || steps[len(steps)-1] != g.Status {
			steps = append(steps, g.Status)
		}
	}
	assert.Equal(t, []mediagen.GenerationStatus{mediagen.GenerationStatusPending, mediagen.GenerationStatusRunning, mediagen.GenerationStatusDone}, steps)

	// And through poll, a second render is seen from pending to done.
	g, err = c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "q"})
	require.NoError(t, err)
	var seen []mediagen.GenerationStatus
	_, err = poll.Generation(t.Context(), c, g.ID, poll.OnUpdate(func(g *mediagen.Generation) { seen = append(seen, g.Status) }))
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, seen[len(seen)-1])
}

// Expiry is reached through Advance: 24 hours after the request the
// generation answers ErrNotFound and its asset URL is refused.
func TestExpiryThroughAdvance(t *testing.T) {
	srv := clienttest.NewServer(t)
	c := srv.Client()
	g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "p"})
	require.NoError(t, err)
	g, err = poll.Generation(t.Context(), c, g.ID)
	require.NoError(t, err)
	srv.Advance(25 * time.Hour)
	_, err = c.GetGeneration(t.Context(), g.ID)
	assert.ErrorIs(t, err, client.ErrNotFound)
	err = c.Download(t.Context(), g.Output.URL(), &bytes.Buffer{})
	assert.Error(t, err)
}

func TestConcurrentWaitsAreRaceFree(t *testing.T) {
	srv := clienttest.NewServer(t)
	c := srv.Client()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			g, err := c.CreateGeneration(context.Background(), client.ImageGenerationArgs{Prompt: "p"})
			if !assert.NoError(t, err) {
				return
			}
			_, err = poll.Generation(context.Background(), c, g.ID)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
}

func TestControls(t *testing.T) {
	srv := clienttest.NewServer(t)
	c := srv.Client()
	srv.SetBalance(3)
	assert.Equal(t, 3.0, srv.Balance())

	old := srv.WebhookSecret()
	rotated := srv.RotateWebhookSecret()
	assert.NotEqual(t, old, rotated)
	assert.Equal(t, rotated, srv.WebhookSecret())

	require.NoError(t, srv.RetireVoice("ava-warm-narrator"))
	_, err := c.GetVoice(t.Context(), "ava-warm-narrator")
	assert.ErrorIs(t, err, client.ErrNotFound)
	assert.Error(t, srv.RetireVoice("ava-warm-narrator"), "already retired")

	secret := srv.AddProject("second-key", 7)
	assert.NotEmpty(t, secret)
	assert.Equal(t, 7.0, srv.BalanceOf("second-key"))
}

func TestStartNeedsNoTestingTB(t *testing.T) {
	srv, err := clienttest.Start(clienttest.WithBalance(2))
	require.NoError(t, err)
	defer srv.Close()
	assert.Equal(t, 2.0, srv.Balance())

	_, err = clienttest.Start(clienttest.WithBalance(-1), clienttest.WithRenderScale(0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "WithBalance")
	assert.Contains(t, err.Error(), "WithRenderScale")
	assert.Panics(t, func() { srv.MustClient(client.WithMaxRetries(-1)) }, "MustClient panics on bad client options")
	_, err = srv.ClientFor(srv.APIKey(), client.WithMaxRetries(-1))
	require.ErrorContains(t, err, "WithMaxRetries", "ClientFor returns the error")
	assert.NotNil(t, srv.MustClient(), "without options it cannot fail")
}
