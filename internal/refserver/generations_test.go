package refserver

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
)

func TestGenerationLifecycleDone(t *testing.T) {
	h := newHarness(t)
	g := h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "a red fox"})
	assert.Equal(t, mediagen.GenerationStatusPending, g.Status)
	assert.Equal(t, mediagen.KindImage, g.Kind)
	assert.Equal(t, testStart, g.RequestDate)
	require.NotZero(t, g.ExpiresAt)
	assert.Equal(t, testStart.Add(24*time.Hour), g.ExpiresAt)
	assert.Zero(t, g.ResponseDate)
	assert.Zero(t, g.Output)
	assert.Equal(t, 0.04, g.BalanceUsed)
	assert.Equal(t, map[string]any{"prompt": "a red fox"}, g.Params)
	assert.NotEmpty(t, g.ProjectID)
	assert.Equal(t, 99.96, h.srv.Balance(keyA))

	// 8 s render: pending for the first 10%, then running, then done.
	h.advance(500 * time.Millisecond)
	assert.Equal(t, mediagen.GenerationStatusPending, h.get(keyA, g.ID).JSON200.Generation.Status)
	h.advance(time.Second)
	assert.Equal(t, mediagen.GenerationStatusRunning, h.get(keyA, g.ID).JSON200.Generation.Status)
	assert.Empty(t, h.recorded())
	h.advance(7 * time.Second)
	done := h.get(keyA, g.ID).JSON200.Generation
	assert.Equal(t, mediagen.GenerationStatusDone, done.Status)
	require.NotZero(t, done.ResponseDate)
	assert.Equal(t, testStart.Add(8*time.Second), done.ResponseDate)
	require.NotZero(t, done.Output)
	assert.NotNil(t, done.Output.Image)
	assert.Equal(t, "image/png", done.Output.MIME)
	assert.Zero(t, done.Error)
	assert.Equal(t, 99.96, h.srv.Balance(keyA), "done keeps the charge")

	evs := h.recorded()
	require.Len(t, evs, 1)
	assert.Equal(t, "generation.done", evs[0].Name)
	assert.Equal(t, keyA, evs[0].ProjectAPIKey)
	assert.Empty(t, evs[0].WebhookURL)
	assert.Equal(t, done, *evs[0].Generation, "the event carries what GET answers")
}

func TestGenerationFailuresRefundExactlyOnce(t *testing.T) {
	for _, outcome := range []Outcome{OutcomeError, OutcomeTimeout} {
		t.Run(string(outcome), func(t *testing.T) {
			h := newHarness(t, WithOutcome(func(string) Outcome { return outcome }))
			g := h.mustCreate(keyA, "video/logo-reveal", map[string]any{"image": h.uploadImage(keyA), "prompt": "sparks", "duration": 10})
			assert.Equal(t, 99.0, h.srv.Balance(keyA))
			h.advance(10 * time.Minute)
			h.advance(10 * time.Minute)
			got := h.get(keyA, g.ID).JSON200.Generation
			assert.Equal(t, mediagen.GenerationStatus(outcome), got.Status)
			require.NotNil(t, got.Error)
			assert.Contains(t, got.Error, "refunded")
			assert.Zero(t, got.Output)
			require.NotZero(t, got.ResponseDate)
			assert.Equal(t, 100.0, h.srv.Balance(keyA))
			evs := h.recorded()
			require.Len(t, evs, 1)
			assert.Equal(t, "generation."+string(outcome), evs[0].Name)
		})
	}
}

func TestWebhookURLRules(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	for _, u := range []string{"http://example.com/hook", "ftp://example.com", "not a url", "http://127.0.0.1:9/hook", "https://"} {
		resp, err := h.client(keyA).CreateGenerationWithResponse(ctx, api.CreateGenerationRequest{
			Feature: "image/generation", Args: map[string]any{"prompt": "p"}, WebhookURL: u,
		})
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode(), u)
	}
	u := "https://hooks.example.com/in"
	resp, err := h.client(keyA).CreateGenerationWithResponse(ctx, api.CreateGenerationRequest{
		Feature: "image/generation", Args: map[string]any{"prompt": "p"}, WebhookURL: u,
	})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode())
	h.advance(time.Minute)
	evs := h.recorded()
	require.Len(t, evs, 1)
	assert.Equal(t, u, evs[0].WebhookURL)

	local := newHarness(t, WithAllowHTTPWebhooks())
	for u, want := range map[string]int{"http://127.0.0.1:9/hook": 200, "http://localhost/hook": 200, "http://[::1]:8/x": 200, "http://example.com/hook": 400} {
		resp, err := local.client(keyA).CreateGenerationWithResponse(ctx, api.CreateGenerationRequest{
			Feature: "image/generation", Args: map[string]any{"prompt": "p"}, WebhookURL: u,
		})
		require.NoError(t, err)
		assert.Equal(t, want, resp.StatusCode(), u)
	}
}

// TestWebhookURLAsDocumented checks what the webhookUrl descriptions of the
// contract and WithAllowHTTPWebhooks say, on both routes that take one: the
// service's rule is https and publicly reachable; the option adds http or
// https on a loopback host, and nothing else.
func TestWebhookURLAsDocumented(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		url           string
		strict, local bool // accepted by default, and with WithAllowHTTPWebhooks
	}{
		{"https://hooks.example.com/in", true, true},
		{"https://203.0.113.7/in", true, true},
		{"http://hooks.example.com/in", false, false},
		{"http://203.0.113.7/in", false, false},
		{"http://127.0.0.1:9/in", false, true},
		{"http://127.1.2.3/in", false, true},
		{"http://[::1]:9/in", false, true},
		{"http://localhost:8080/in", false, true},
		{"https://localhost:8443/in", false, true},
		{"https://127.0.0.1/in", false, true},
		{"http://10.1.2.3/in", false, false},
		{"https://192.168.1.1/in", false, false},
		{"http://169.254.1.1/in", false, false},
		{"ftp://127.0.0.1/in", false, false},
	} {
		for _, allow := range []bool{false, true} {
			var opts []Option
			want := tc.strict
			if allow {
				opts, want = []Option{WithAllowHTTPWebhooks()}, tc.local
			}
			h := newHarness(t, opts...)
			gen, err := h.client(keyA).CreateGenerationWithResponse(ctx, api.CreateGenerationRequest{
				Feature: "image/generation", Args: map[string]any{"prompt": "p"}, WebhookURL: tc.url,
			})
			require.NoError(t, err)
			clone, err := h.client(keyA).CreateVoiceWithResponse(ctx, api.CreateVoiceRequest{
				Name: "v", Audio: h.sample(keyA, 12*time.Second), WebhookURL: tc.url,
			})
			require.NoError(t, err)
			for route, resp := range map[string]*http.Response{"generation": gen.HTTPResponse, "voice": clone.HTTPResponse} {
				if want {
					assert.Equal(t, http.StatusOK, resp.StatusCode, "%s %s, allow %v", route, tc.url, allow)
					continue
				}
				assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s %s, allow %v", route, tc.url, allow)
			}
			if !want {
				require.NotNil(t, gen.JSON400, tc.url)
				assert.Equal(t, api.ErrorCodeInvalidArgument, gen.JSON400.Error.Code)
				msg := gen.JSON400.Error.Message
				switch {
				case strings.HasPrefix(tc.url, "https:"):
					assert.Contains(t, msg, "publicly reachable", tc.url)
				case allow:
					assert.Equal(t, "webhookUrl must be an https URL, or an http URL on a loopback host (this server allows those for local tests)", msg, tc.url)
				default:
					assert.Equal(t, "webhookUrl must be an https URL", msg, tc.url)
				}
			}
		}
	}
}

func TestUnknownFeatureAndMissingArgs(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		feature string
		args    map[string]any
	}{
		{"image/nope", map[string]any{"prompt": "p"}},
		{"", map[string]any{"prompt": "p"}},
		{"IMAGE/GENERATION", map[string]any{"prompt": "p"}},
		{"image/generation", nil},
	} {
		resp := h.create(keyA, tc.feature, tc.args)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode(), tc.feature)
		require.NotNil(t, resp.JSON400)
		assert.Equal(t, api.ErrorCodeInvalidArgument, resp.JSON400.Error.Code)
	}
	assert.Equal(t, 100.0, h.srv.Balance(keyA))
}

func TestLegacySpellingsAreEchoedAndFiltered(t *testing.T) {
	h := newHarness(t)
	legacy := h.mustCreate(keyA, "image-generation", map[string]any{"prompt": "old"})
	assert.Equal(t, mediagen.Feature("image-generation"), legacy.Feature)
	canonical := h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "new"})
	h.mustCreate(keyA, "logo-reveal", map[string]any{"image": h.uploadImage(keyA), "prompt": "p"})

	for _, f := range []string{"image-generation", "image/generation"} {
		resp, err := h.client(keyA).ListGenerationsWithResponse(context.Background(), &api.ListGenerationsParams{Feature: f})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode())
		ids := []string{}
		for _, g := range resp.JSON200.Generations {
			ids = append(ids, g.ID)
		}
		assert.Equal(t, []string{canonical.ID, legacy.ID}, ids, f)
	}
	unknown := "nope"
	resp, err := h.client(keyA).ListGenerationsWithResponse(context.Background(), &api.ListGenerationsParams{Feature: unknown})
	require.NoError(t, err)
	assert.Empty(t, resp.JSON200.Generations)
	assert.Nil(t, resp.JSON200.NextCursor)
}

func TestInsufficientBalance(t *testing.T) {
	h := newHarness(t)
	h.srv.SetBalance(keyA, 0.05)
	resp := h.create(keyA, "image/ad", map[string]any{"image": h.uploadImage(keyA), "prompt": "p"})
	require.Equal(t, http.StatusPaymentRequired, resp.StatusCode(), string(resp.Body))
	require.NotNil(t, resp.JSON402)
	assert.Equal(t, api.InsufficientBalanceDetailCodeInsufficientBalance, resp.JSON402.Error.Code)
	assert.Equal(t, 0.08, resp.JSON402.Error.Required)
	assert.Equal(t, 0.05, resp.JSON402.Error.Balance)
	assert.Equal(t, "this call costs 0.08 USD; the balance is 0.05 USD", resp.JSON402.Error.Message)
	assert.Equal(t, 0.05, h.srv.Balance(keyA))

	h.srv.SetBalance(keyA, 0.08)
	h.mustCreate(keyA, "image/ad", map[string]any{"image": h.uploadImage(keyA), "prompt": "p"})
	assert.Equal(t, 0.0, h.srv.Balance(keyA), "an exact balance is enough")
}

func TestLikenessPermission(t *testing.T) {
	h := newHarness(t)
	img := h.uploadImage(keyA)
	for _, args := range []map[string]any{
		{"image": img, "prompt": "me"},
		{"image": img, "prompt": "me", "permissionConfirmed": false},
	} {
		resp := h.create(keyA, "image/self-portrait", args)
		require.Equal(t, http.StatusForbidden, resp.StatusCode())
		require.NotNil(t, resp.JSON403)
		assert.Equal(t, api.ErrorCodePermissionRequired, resp.JSON403.Error.Code)
		assert.Contains(t, resp.JSON403.Error.Message, "permissionConfirmed")
	}
	resp := h.create(keyA, "video/avatar", map[string]any{"voiceId": "ava-warm-narrator", "script": "Hello"})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode(), string(resp.Body))
	assert.Equal(t, 100.0, h.srv.Balance(keyA))

	h.mustCreate(keyA, "image/self-portrait", map[string]any{"image": img, "prompt": "me", "permissionConfirmed": true})
}

func TestDeleteGeneration(t *testing.T) {
	h := newHarness(t)
	g := h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "p"})
	h.advance(time.Minute)
	done := h.get(keyA, g.ID).JSON200.Generation
	status, _, _ := h.raw(http.MethodGet, done.Output.Image, "", "", nil)
	require.Equal(t, http.StatusOK, status)

	// Another project cannot delete it.
	resp, err := h.client(keyB).DeleteGenerationWithResponse(context.Background(), g.ID)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode())

	resp, err = h.client(keyA).DeleteGenerationWithResponse(context.Background(), g.ID)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode())
	assert.True(t, resp.JSON200.Success)
	assert.Equal(t, http.StatusNotFound, h.get(keyA, g.ID).StatusCode())
	status, _, _ = h.raw(http.MethodGet, done.Output.Image, "", "", nil)
	assert.Equal(t, http.StatusNotFound, status, "assets are removed")
	assert.Equal(t, 99.96, h.srv.Balance(keyA), "no refund")

	resp, err = h.client(keyA).DeleteGenerationWithResponse(context.Background(), g.ID)
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, resp.StatusCode())
	require.NotNil(t, resp.JSON404)
}

func TestDeleteInFlightFinishesUnseen(t *testing.T) {
	fail := true
	h := newHarness(t, WithOutcome(func(string) Outcome {
		if fail {
			return OutcomeError
		}
		return OutcomeDone
	}))
	g := h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "p"})
	resp, err := h.client(keyA).DeleteGenerationWithResponse(context.Background(), g.ID)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode())
	assert.Equal(t, http.StatusNotFound, h.get(keyA, g.ID).StatusCode())
	list, err := h.client(keyA).ListGenerationsWithResponse(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, list.JSON200.Generations)
	assert.Equal(t, 99.96, h.srv.Balance(keyA))

	h.advance(time.Minute)
	assert.Equal(t, 100.0, h.srv.Balance(keyA), "a failed render is refunded even when deleted")
	assert.Empty(t, h.recorded(), "no event for a deleted generation")
	h.srv.mu.Lock()
	assert.Empty(t, h.srv.gens, "dropped once settled")
	h.srv.mu.Unlock()
}

func TestGenerationsExpireAfter24Hours(t *testing.T) {
	h := newHarness(t)
	g := h.mustCreate(keyA, "audio/voiceover", map[string]any{"voiceId": "ava-warm-narrator", "script": "Hello there"})
	h.advance(time.Minute)
	done := h.get(keyA, g.ID).JSON200.Generation
	require.Equal(t, mediagen.GenerationStatusDone, done.Status)

	h.advance(24*time.Hour - time.Minute - time.Second)
	assert.Equal(t, http.StatusOK, h.get(keyA, g.ID).StatusCode())
	status, _, _ := h.raw(http.MethodGet, done.Output.Audio, "", "", nil)
	assert.Equal(t, http.StatusOK, status)

	h.advance(time.Second)
	assert.Equal(t, http.StatusNotFound, h.get(keyA, g.ID).StatusCode())
	list, err := h.client(keyA).ListGenerationsWithResponse(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, list.JSON200.Generations)
	status, _, _ = h.raw(http.MethodGet, done.Output.Audio, "", "", nil)
	assert.Equal(t, http.StatusForbidden, status, "the output URL expired with the generation")
	h.srv.mu.Lock()
	assert.Empty(t, h.srv.gens)
	h.srv.mu.Unlock()
}

func TestTenantIsolationOfGenerations(t *testing.T) {
	h := newHarness(t)
	g := h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "mine"})
	assert.Equal(t, http.StatusNotFound, h.get(keyB, g.ID).StatusCode())
	list, err := h.client(keyB).ListGenerationsWithResponse(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, list.JSON200.Generations)
	assert.Equal(t, 100.0, h.srv.Balance(keyB))

	// A's file cannot be used by B.
	img := h.uploadImage(keyA)
	resp := h.create(keyB, "image/ad", map[string]any{"image": img, "prompt": "p"})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode())
	assert.Contains(t, resp.JSON400.Error.Message, "not found")
}

func TestListingPagesNewestFirst(t *testing.T) {
	h := newHarness(t)
	var ids []string
	for range 30 {
		ids = append(ids, h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "p"}).ID)
		h.clock.Advance(time.Second)
	}
	c := h.client(keyA)
	first, err := c.ListGenerationsWithResponse(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, first.JSON200.Generations, 24, "default page size")
	assert.Equal(t, ids[29], first.JSON200.Generations[0].ID)
	require.NotNil(t, first.JSON200.NextCursor)

	second, err := c.ListGenerationsWithResponse(context.Background(), &api.ListGenerationsParams{Cursor: *first.JSON200.NextCursor})
	require.NoError(t, err)
	require.Len(t, second.JSON200.Generations, 6)
	assert.Equal(t, ids[5], second.JSON200.Generations[0].ID)
	assert.Equal(t, ids[0], second.JSON200.Generations[5].ID)
	assert.Nil(t, second.JSON200.NextCursor)

	for limit, want := range map[int]int{0: 24, -3: 24, 1: 1, 100: 30, 1000: 30} {
		l := limit
		resp, err := c.ListGenerationsWithResponse(context.Background(), &api.ListGenerationsParams{Limit: l})
		require.NoError(t, err)
		assert.Len(t, resp.JSON200.Generations, want, limit)
	}

	bad := "not-a-cursor"
	resp, err := c.ListGenerationsWithResponse(context.Background(), &api.ListGenerationsParams{Cursor: bad})
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode())
}

func TestListingClampsAt100(t *testing.T) {
	h := newHarness(t)
	h.srv.SetBalance(keyA, 1000)
	for range 105 {
		h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "p"})
	}
	l := 500
	resp, err := h.client(keyA).ListGenerationsWithResponse(context.Background(), &api.ListGenerationsParams{Limit: l})
	require.NoError(t, err)
	assert.Len(t, resp.JSON200.Generations, 100)
	assert.NotNil(t, resp.JSON200.NextCursor)
}

func TestCursorStableUnderInsertsAndDeletes(t *testing.T) {
	h := newHarness(t)
	c := h.client(keyA)
	var ids []string
	for range 10 {
		ids = append(ids, h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "p"}).ID)
	}
	l := 4
	page, err := c.ListGenerationsWithResponse(context.Background(), &api.ListGenerationsParams{Limit: l})
	require.NoError(t, err)
	seen := []string{}
	for _, g := range page.JSON200.Generations {
		seen = append(seen, g.ID)
	}
	// New rows arrive and a row of the next page and the cursor row itself go away.
	for range 3 {
		h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "new"})
	}
	for _, id := range []string{ids[6], ids[4]} {
		_, err := c.DeleteGenerationWithResponse(context.Background(), id)
		require.NoError(t, err)
	}
	cur := page.JSON200.NextCursor
	for cur != nil {
		page, err = c.ListGenerationsWithResponse(context.Background(), &api.ListGenerationsParams{Limit: l, Cursor: *cur})
		require.NoError(t, err)
		for _, g := range page.JSON200.Generations {
			seen = append(seen, g.ID)
		}
		cur = page.JSON200.NextCursor
	}
	assert.Equal(t, []string{ids[9], ids[8], ids[7], ids[6], ids[5], ids[3], ids[2], ids[1], ids[0]}, seen)
}

func TestPagingWhileOthersInsertAndDelete(t *testing.T) {
	h := newHarness(t)
	h.srv.SetBalance(keyA, 1000)
	var ids []string
	for range 40 {
		ids = append(ids, h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "p"}).ID)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		c := h.client(keyA)
		for {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := c.CreateGenerationWithResponse(context.Background(), api.CreateGenerationRequest{Feature: "image/generation", Args: map[string]any{"prompt": "noise"}})
			if !assert.NoError(t, err) || !assert.Equal(t, http.StatusOK, resp.StatusCode()) {
				return
			}
			_, err = c.DeleteGenerationWithResponse(context.Background(), resp.JSON200.Generation.ID)
			assert.NoError(t, err)
		}
	}()
	c := h.client(keyA)
	l := 7
	var seen []string
	var cur string
	for {
		page, err := c.ListGenerationsWithResponse(context.Background(), &api.ListGenerationsParams{Limit: l, Cursor: cur})
		require.NoError(t, err)
		for _, g := range page.JSON200.Generations {
			if g.Params["prompt"] == "p" {
				seen = append(seen, g.ID)
			}
		}
		if page.JSON200.NextCursor == nil {
			break
		}
		cur = *page.JSON200.NextCursor
	}
	close(stop)
	<-done
	want := make([]string, len(ids))
	for i, id := range ids {
		want[len(ids)-1-i] = id
	}
	assert.Equal(t, want, seen, "every row once, newest first, whatever happens meanwhile")
}
