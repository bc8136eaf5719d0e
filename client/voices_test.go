package client_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
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

func TestVoiceCatalog(t *testing.T) {
	_, c, ctx := setup(t)
	all, err := c.Voices(ctx, client.VoiceFilter{})
	require.NoError(t, err)
	require.NotEmpty(t, all)
	v := all[0]
	require.NotEmpty(t, v.Slug)
	require.NotEmpty(t, v.Tags)
	require.NotEmpty(t, v.Locale)
	require.NotNil(t, v.Favorite, "catalog voices say whether they are starred")
	assert.False(t, v.Favorite)
	assert.Empty(t, v.Status, "catalog voices have no training state")
	assert.True(t, v.Terminal())
	assert.Equal(t, mediagen.VoiceOwnerService, v.Owner)

	byID, err := c.GetVoice(ctx, v.ID)
	require.NoError(t, err)
	bySlug, err := c.GetVoice(ctx, v.Slug)
	require.NoError(t, err)
	assert.Equal(t, byID.ID, bySlug.ID)

	tag := v.Tags[0]
	tagged, err := c.Voices(ctx, client.VoiceFilter{Tags: []string{tag}, Locale: v.Locale})
	require.NoError(t, err)
	require.NotEmpty(t, tagged)
	for _, w := range tagged {
		assert.Contains(t, w.Tags, tag)
		assert.Equal(t, v.Locale, w.Locale)
	}
	none, err := c.Voices(ctx, client.VoiceFilter{Locale: "xx-XX"})
	require.NoError(t, err)
	assert.Empty(t, none)

	_, err = c.Voices(ctx, client.VoiceFilter{Owner: "everyone"})
	assert.ErrorIs(t, err, client.ErrInvalidArgument)
	_, err = c.GetVoice(ctx, "no-such-voice")
	assert.ErrorIs(t, err, client.ErrNotFound)
}

func TestFavoriteVoice(t *testing.T) {
	_, c, ctx := setup(t)
	v := catalogVoice(t, ctx, c)

	for range 2 { // idempotent
		require.NoError(t, c.FavoriteVoice(ctx, v.Slug))
	}
	favs, err := c.Voices(ctx, client.VoiceFilter{Favorites: true})
	require.NoError(t, err)
	require.Len(t, favs, 1)
	assert.Equal(t, v.ID, favs[0].ID)
	require.NotNil(t, favs[0].Favorite)
	assert.True(t, favs[0].Favorite)

	for range 2 { // idempotent
		require.NoError(t, c.UnfavoriteVoice(ctx, v.ID))
	}
	favs, err = c.Voices(ctx, client.VoiceFilter{Favorites: true})
	require.NoError(t, err)
	assert.Empty(t, favs)

	err = c.FavoriteVoice(ctx, "no-such-voice")
	assert.ErrorIs(t, err, client.ErrNotFound)
}

func TestCloneVoice(t *testing.T) {
	srv, c, ctx := setup(t)
	sample := uploadWAV(t, ctx, c, 12*time.Second)

	v, err := c.CloneVoice(ctx, client.CloneVoiceParams{Name: "Narrator", Audio: sample, Description: "calm"})
	require.NoError(t, err)
	assert.Equal(t, mediagen.VoiceOwnerProject, v.Owner)
	assert.False(t, v.Favorite, "clones cannot be starred")
	assert.False(t, v.RequestDate.IsZero())
	assert.Equal(t, mediagen.VoiceStatusRunning, v.Status)
	assert.Less(t, srv.Balance(), clienttest.Balance, "charged on submit")

	mine, err := c.Voices(ctx, client.VoiceFilter{Owner: mediagen.VoiceOwnerProject})
	require.NoError(t, err)
	require.Len(t, mine, 1)
	assert.Equal(t, v.ID, mine[0].ID)
	all, err := c.Voices(ctx, client.VoiceFilter{})
	require.NoError(t, err)
	assert.Equal(t, v.ID, all[0].ID, "clones first")

	srv.Advance(time.Hour)
	trained, err := c.GetVoice(ctx, v.ID)
	require.NoError(t, err)
	assert.Equal(t, mediagen.VoiceStatusDone, trained.Status)
	assert.True(t, trained.Terminal())

	// A trained clone speaks.
	g, err := c.CreateGeneration(ctx, client.VoiceoverArgs{VoiceID: v.ID, Script: "Hello."})
	require.NoError(t, err)
	assert.Equal(t, mediagen.KindAudio, g.Kind)

	require.NoError(t, c.DeleteVoice(ctx, v.ID))
	_, err = c.GetVoice(ctx, v.ID)
	assert.ErrorIs(t, err, client.ErrNotFound)
	assert.ErrorIs(t, c.DeleteVoice(ctx, catalogVoice(t, ctx, c).ID), client.ErrNotFound, "catalog voices cannot be deleted")

	short := uploadWAV(t, ctx, c, 3*time.Second)
	_, err = c.CloneVoice(ctx, client.CloneVoiceParams{Name: "Short", Audio: short})
	assert.ErrorIs(t, err, client.ErrInvalidArgument)
	_, err = c.CloneVoice(ctx, client.CloneVoiceParams{Name: "No audio"})
	assert.ErrorIs(t, err, client.ErrInvalidArgument)
}

func TestCloneVoiceRateLimited(t *testing.T) {
	_, c, ctx := setup(t)
	sample := uploadWAV(t, ctx, c, 11*time.Second)
	var ids []string
	for i := range 5 {
		v, err := c.CloneVoice(ctx, client.CloneVoiceParams{Name: fmt.Sprintf("Voice %d", i), Audio: sample})
		require.NoError(t, err)
		ids = append(ids, v.ID)
	}
	_, err := c.CloneVoice(ctx, client.CloneVoiceParams{Name: "Sixth", Audio: sample})
	require.ErrorIs(t, err, client.ErrRateLimited)
	var apiErr *client.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Positive(t, apiErr.RetryAfter)
	assert.Equal(t, "rate_limited", apiErr.Code)

	mine, err := c.Voices(ctx, client.VoiceFilter{Owner: mediagen.VoiceOwnerProject})
	require.NoError(t, err)
	assert.Len(t, mine, 5, "the refused clone was not created")
	for _, v := range mine {
		assert.True(t, slices.Contains(ids, v.ID))
	}
}

// hookReceiver is a webhook endpoint that verifies and keeps what it gets.
type hookReceiver struct {
	URL    string
	mu     sync.Mutex
	events []*webhook.Event
	errs   []error
}

func newHookReceiver(t *testing.T, srv *clienttest.Server) *hookReceiver {
	h := &hookReceiver{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev, err := webhook.Parse(body, r.Header, srv.WebhookSecret(), webhook.WithNow(srv.Now))
		h.mu.Lock()
		defer h.mu.Unlock()
		if err != nil {
			h.errs = append(h.errs, err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.events = append(h.events, ev)
	}))
	t.Cleanup(hs.Close)
	h.URL = hs.URL + "/hooks/mediagen"
	return h
}

func (h *hookReceiver) received() ([]*webhook.Event, []error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events), slices.Clone(h.errs)
}

func TestCloneVoiceWebhookURL(t *testing.T) {
	srv, c, ctx := setup(t)
	hooks := newHookReceiver(t, srv)
	sample := uploadWAV(t, ctx, c, 12*time.Second)

	v, err := c.CloneVoice(ctx, client.CloneVoiceParams{Name: "Narrator", Audio: sample}, client.WithWebhookURL(hooks.URL))
	require.NoError(t, err)
	_, err = c.CloneVoice(ctx, client.CloneVoiceParams{Name: "Quiet", Audio: sample}) // no webhook
	require.NoError(t, err)
	_, err = c.CloneVoice(ctx, client.CloneVoiceParams{Name: "Bad", Audio: sample}, client.WithWebhookURL("hooks.example.com/x"))
	require.ErrorContains(t, err, "WithWebhookURL", "not an absolute URL: refused before sending")
	srv.Advance(time.Hour)
	srv.WaitDeliveries()

	events, errs := hooks.received()
	require.Empty(t, errs)
	require.Len(t, events, 1, "the clone given the URL, and only it")
	assert.Equal(t, webhook.EventVoiceDone, events[0].Name)
	require.NotNil(t, events[0].Voice)
	assert.Equal(t, v.ID, events[0].Voice.ID)
}

// TestWebhookURLOfTheClient: given to New, the URL applies to every
// generation and clone.
func TestWebhookURLOfTheClient(t *testing.T) {
	srv, clean, ctx := setup(t)
	hooks := newHookReceiver(t, srv)
	sample := uploadWAV(t, ctx, clean, 12*time.Second)
	c := srv.Client(client.WithWebhookURL(hooks.URL))

	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a swift"})
	require.NoError(t, err)
	v, err := c.CloneVoice(ctx, client.CloneVoiceParams{Name: "Narrator", Audio: sample})
	require.NoError(t, err)
	srv.Advance(time.Hour)
	srv.WaitDeliveries()

	events, errs := hooks.received()
	require.Empty(t, errs)
	got := map[webhook.EventName]string{}
	for _, ev := range events {
		switch {
		case ev.Generation != nil:
			got[ev.Name] = ev.Generation.ID
		case ev.Voice != nil:
			got[ev.Name] = ev.Voice.ID
		}
	}
	assert.Equal(t, map[webhook.EventName]string{webhook.EventGenerationDone: g.ID, webhook.EventVoiceDone: v.ID}, got)
}
