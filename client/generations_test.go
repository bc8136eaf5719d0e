package client_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
)

func TestGenerationLifecycle(t *testing.T) {
	srv, c, ctx := setup(t)
	img := uploadPNG(t, ctx, c)
	args := client.LogoRevealArgs{Image: img, Prompt: "sparks gather into the logo", Mode: client.ModeOutro, Duration: 4, Resolution: client.Resolution1080p}

	g, err := c.CreateGeneration(ctx, asArgs(t, mediagen.FeatureVideoLogoReveal, args))
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusPending, g.Status)
	assert.Equal(t, mediagen.KindVideo, g.Kind)
	assert.InDelta(t, 0.6, g.BalanceUsed, 1e-9) // 0.10 × 1.5 × 4 s
	assert.InDelta(t, clienttest.Balance-0.6, srv.Balance(), 1e-9)
	assert.Equal(t, map[string]any{"image": img, "prompt": args.Prompt, "mode": "outro", "duration": 4.0, "resolution": "1080p"}, g.Params)
	require.False(t, g.ExpiresAt.IsZero())
	assert.Equal(t, g.RequestDate.Add(24*time.Hour), g.ExpiresAt)

	srv.Advance(10 * time.Minute)
	got, err := c.GetGeneration(ctx, g.ID)
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusDone, got.Status)
	assert.True(t, got.Terminal())
	require.NotEmpty(t, got.Output.Video)
	assert.Equal(t, got.Output.Video, got.Output.URL())
	assert.NotEmpty(t, got.Output.Poster)
	assert.Positive(t, got.Output.DurationMs)
	assert.Empty(t, got.Error)
	assert.Equal(t, "video/mp4", got.Output.MIME)

	require.NoError(t, c.DeleteGeneration(ctx, g.ID))
	_, err = c.GetGeneration(ctx, g.ID)
	assert.ErrorIs(t, err, client.ErrNotFound)
	assert.ErrorIs(t, c.DeleteGeneration(ctx, g.ID), client.ErrNotFound)
}

func TestCreateGenerationLegacySpelling(t *testing.T) {
	_, c, ctx := setup(t)
	img := uploadPNG(t, ctx, c)

	// The legacy flat spelling goes through RawArgs, and is sent and echoed
	// as written.
	legacy := client.RawArgs{FeatureName: "logo-reveal", Values: map[string]any{"image": img, "prompt": "a slow zoom", "duration": 4}}
	g, err := c.CreateGeneration(ctx, legacy)
	require.NoError(t, err)
	assert.Equal(t, "logo-reveal", string(g.Feature), "the feature is echoed as submitted")
	assert.Equal(t, mediagen.FeatureVideoLogoReveal, client.CanonicalFeature(g.Feature))
	assert.Equal(t, mediagen.KindVideo, g.Kind)
	assert.Equal(t, map[string]any{"image": img, "prompt": "a slow zoom", "duration": 4.0}, g.Params)
	prices, err := c.Pricing(ctx)
	require.NoError(t, err)
	e, err := prices.Estimate(legacy)
	require.NoError(t, err)
	assert.Equal(t, mediagen.FeatureVideoLogoReveal, e.Feature, "priced under the canonical name")
	assert.InDelta(t, e.Min, g.BalanceUsed, 1e-9)

	m, err := c.CreateGeneration(ctx, client.RawArgs{FeatureName: mediagen.FeatureVideoLogoReveal, Values: map[string]any{"image": img, "prompt": "a fast zoom"}})
	require.NoError(t, err)
	assert.Equal(t, mediagen.FeatureVideoLogoReveal, m.Feature)

	for _, filter := range []mediagen.Feature{"logo-reveal", mediagen.FeatureVideoLogoReveal} {
		page, err := c.ListGenerations(ctx, client.ListParams{Feature: filter})
		require.NoError(t, err)
		require.Len(t, page.Generations, 2, filter)
		assert.ElementsMatch(t, []string{g.ID, m.ID}, []string{page.Generations[0].ID, page.Generations[1].ID})
	}
	page, err := c.ListGenerations(ctx, client.ListParams{Feature: mediagen.FeatureVideoAvatar})
	require.NoError(t, err)
	assert.Empty(t, page.Generations)
}

func TestCreateGenerationRefusedBeforeSending(t *testing.T) {
	var requests atomic.Int32
	srv := clienttest.NewServer(t)
	next := loopback(t)
	counting := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		requests.Add(1)
		return next.RoundTrip(r)
	})}
	c := srv.Client(client.WithHTTPClient(counting))
	ctx := t.Context()

	cases := map[string]client.Args{
		"mode not in the document": client.LogoRevealArgs{Image: "f", Prompt: "p", Mode: "sideways"},
		"aspect ratio of a reveal": client.RawArgs{FeatureName: mediagen.FeatureVideoLogoReveal, Values: map[string]any{"image": "f", "prompt": "p", "aspectRatio": "1:1"}},
		"missing logo":             client.RawArgs{FeatureName: "logo-reveal", Values: map[string]any{"prompt": "p"}},
		"duration not an integer":  client.RawArgs{FeatureName: mediagen.FeatureVideoLogoReveal, Values: map[string]any{"image": "f", "prompt": "p", "duration": 4.5}},
		"args not an object":       listArgs{"a"},
		"empty feature":            client.RawArgs{Values: map[string]any{"prompt": "p"}},
		"nil typed args":           (*client.ImageGenerationArgs)(nil),
		"nil args":                 nil,
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := c.CreateGeneration(ctx, args)
			require.ErrorIs(t, err, client.ErrInvalidArgument)
			var apiErr *client.APIError
			assert.False(t, errors.As(err, &apiErr), "refused by the client, not the service")
		})
	}
	assert.Zero(t, requests.Load())
	assert.Equal(t, clienttest.Balance, srv.Balance())
}

func TestCreateGenerationErrors(t *testing.T) {
	srv, c, ctx := setup(t)
	img := uploadPNG(t, ctx, c)

	t.Run("400 invalid argument", func(t *testing.T) {
		_, err := c.CreateGeneration(ctx, client.ProductShotArgs{Image: "file_missing", Prompt: "p"})
		require.ErrorIs(t, err, client.ErrInvalidArgument)
		var apiErr *client.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
		assert.Equal(t, "invalid_argument", apiErr.Code)
		assert.Equal(t, "POST", apiErr.Method)
		assert.Equal(t, "/v3/generations", apiErr.Path)
		assert.NotEmpty(t, apiErr.Message)
		assert.NotEmpty(t, apiErr.Body)
	})
	t.Run("401 unauthorized", func(t *testing.T) {
		bad, err := client.New("mg_wrong_key_123456", client.WithBaseURL(srv.URL()))
		require.NoError(t, err)
		_, err = bad.GetGeneration(ctx, "gen_x")
		require.ErrorIs(t, err, client.ErrUnauthorized)
		assert.NotContains(t, err.Error(), "mg_wrong_key_123456")
	})
	t.Run("402 insufficient balance", func(t *testing.T) {
		srv.SetBalance(0.01)
		t.Cleanup(func() { srv.SetBalance(clienttest.Balance) })
		_, err := c.CreateGeneration(ctx, client.AdArgs{Image: img, Prompt: "p", FineDetails: true})
		require.ErrorIs(t, err, client.ErrInsufficientBalance)
		var ib *client.InsufficientBalanceError
		require.ErrorAs(t, err, &ib)
		assert.InDelta(t, 0.12, ib.Required, 1e-9)
		assert.InDelta(t, 0.01, ib.Balance, 1e-9)
		var apiErr *client.APIError
		require.ErrorAs(t, err, &apiErr, "the embedded APIError is found too")
		assert.Equal(t, http.StatusPaymentRequired, apiErr.StatusCode)
		assert.Equal(t, "insufficient_balance", apiErr.Code)
		assert.InDelta(t, 0.01, srv.Balance(), 1e-9, "nothing charged")
	})
	t.Run("403 permission required", func(t *testing.T) {
		_, err := c.CreateGeneration(ctx, client.SelfPortraitArgs{Image: img, Prompt: "p"})
		require.ErrorIs(t, err, client.ErrPermissionRequired)
		g, err := c.CreateGeneration(ctx, client.SelfPortraitArgs{Image: img, Prompt: "p", PermissionConfirmed: true})
		require.NoError(t, err)
		assert.Equal(t, mediagen.KindImage, g.Kind)
	})
	t.Run("404 not found", func(t *testing.T) {
		_, err := c.GetGeneration(ctx, "gen_does_not_exist")
		require.ErrorIs(t, err, client.ErrNotFound)
		assert.NotErrorIs(t, err, client.ErrUnauthorized)
	})
	t.Run("expired after 24 hours", func(t *testing.T) {
		g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "short-lived"})
		require.NoError(t, err)
		srv.Advance(24*time.Hour + time.Second)
		_, err = c.GetGeneration(ctx, g.ID)
		require.ErrorIs(t, err, client.ErrNotFound)
	})
}

func TestCreateGenerationWebhookURL(t *testing.T) {
	_, c, ctx := setup(t) // clienttest's server allows plain-http webhooks to loopback

	_, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "p"}, client.WithWebhookURL("http://example.com/hook"))
	require.ErrorIs(t, err, client.ErrInvalidArgument, "plain http to a public host is refused")

	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "p"}, client.WithWebhookURL("http://127.0.0.1:9/hook"))
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusPending, g.Status)
}

// roundTripFunc adapts a function to http.RoundTripper.
// listArgs are arguments that do not encode as a JSON object.
type listArgs []string

func (listArgs) Feature() mediagen.Feature { return mediagen.FeatureImageGeneration }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A delete the service answers with success false deleted nothing: the
// call says so instead of reporting success.
func TestDeleteAnsweredSuccessFalse(t *testing.T) {
	srv, _, ctx := setup(t)
	refuse := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		if err != nil || req.Method != http.MethodDelete {
			return resp, err
		}
		_ = resp.Body.Close()
		body := `{"success":false}`
		resp.Body, resp.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
		return resp, nil
	}
	c := srv.Client(client.WithMiddleware(refuse))
	g, err := c.CreateGeneration(ctx, asArgs(t, mediagen.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: "a kept kite"}))
	require.NoError(t, err)
	err = c.DeleteGeneration(ctx, g.ID)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "success false")

	voice, err := c.CloneVoice(ctx, client.CloneVoiceParams{Name: "Kept", Audio: uploadWAV(t, ctx, c, 12*time.Second)})
	require.NoError(t, err)
	err = c.DeleteVoice(ctx, voice.ID)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "success false")
}

// TestDotIDsAreRefused: an id "." or ".." is a path segment of its own, which
// a URL resolves away: GetGeneration(".") read the list and returned an
// empty generation with no error.
func TestDotIDsAreRefused(t *testing.T) {
	_, c, ctx := setup(t)
	for _, id := range []string{".", ".."} {
		g, err := c.GetGeneration(ctx, id)
		assert.ErrorIs(t, err, client.ErrInvalidArgument, id)
		assert.Nil(t, g, id)
		v, err := c.GetVoice(ctx, id)
		assert.ErrorIs(t, err, client.ErrInvalidArgument, id)
		assert.Nil(t, v, id)
		_, err = c.TemplatePrompt(ctx, id)
		assert.ErrorIs(t, err, client.ErrInvalidArgument, id)
		assert.ErrorIs(t, c.DeleteGeneration(ctx, id), client.ErrInvalidArgument, id)
		assert.ErrorIs(t, c.DeleteVoice(ctx, id), client.ErrInvalidArgument, id)
		assert.ErrorIs(t, c.FavoriteVoice(ctx, id), client.ErrInvalidArgument, id)
	}
}
