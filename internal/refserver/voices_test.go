package refserver

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/feature"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

const avaID = "80cb22f0-6f42-4d9f-b729-57ddd40c66a8"

// listVoices lists voices as key with params.
func (h *harness) listVoices(key string, p *api.ListVoicesParams) []mediagen.Voice {
	h.t.Helper()
	resp, err := h.client(key).ListVoicesWithResponse(context.Background(), p)
	require.NoError(h.t, err)
	require.Equal(h.t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	return resp.JSON200.Voices
}

// sample uploads a WAV voice sample of length d as key.
func (h *harness) sample(key string, d time.Duration) string {
	return h.upload(key, map[string][]byte{"sample.wav": media.WAV(d, "voice")}, "sample.wav")[0]
}

// cloneAnswer is the answer to POST /v3/voices.
type cloneAnswer struct {
	status int
	voice  *mediagen.Voice
	body   string
	retry  string // Retry-After
}

// cloneVoice submits a clone as key.
func (h *harness) cloneVoice(key, name, audio string) cloneAnswer {
	h.t.Helper()
	resp, err := h.client(key).CreateVoiceWithResponse(context.Background(), api.CreateVoiceRequest{Name: name, Audio: audio})
	require.NoError(h.t, err)
	out := cloneAnswer{status: resp.StatusCode(), body: string(resp.Body), retry: resp.HTTPResponse.Header.Get("Retry-After")}
	if resp.JSON200 != nil {
		out.voice = &resp.JSON200.Voice
	}
	return out
}

func TestVoiceCatalog(t *testing.T) {
	h := newHarness(t)
	all := h.listVoices(keyA, nil)
	require.GreaterOrEqual(t, len(all), 12)
	locales, genders, categories := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, v := range all {
		assert.Equal(t, mediagen.VoiceOwnerService, v.Owner)
		require.NotZero(t, v.Slug)
		require.NotZero(t, v.Locale)
		require.NotZero(t, v.Tags)
		require.NotZero(t, v.Preview)
		assert.Zero(t, v.Status)
		locales[v.Locale] = true
		for _, tag := range v.Tags {
			switch tag {
			case "male", "female", "neutral":
				genders[tag] = true
			case "narration", "conversational", "character", "creature":
				categories[tag] = true
			}
		}
	}
	assert.Greater(t, len(locales), 2)
	assert.GreaterOrEqual(t, len(genders), 2)
	assert.Len(t, categories, 4)

	body := h.fetch(all[0].Preview, "audio/wav")
	d, err := media.AudioDuration(body)
	require.NoError(t, err)
	assert.Positive(t, d)

	bySlug, err := h.client(keyA).GetVoiceWithResponse(context.Background(), "ava-warm-narrator")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, bySlug.StatusCode())
	assert.Equal(t, avaID, bySlug.JSON200.Voice.ID)
	byID, err := h.client(keyA).GetVoiceWithResponse(context.Background(), avaID)
	require.NoError(t, err)
	assert.Equal(t, "ava-warm-narrator", byID.JSON200.Voice.Slug)

	missing, err := h.client(keyA).GetVoiceWithResponse(context.Background(), "no-such-voice")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, missing.StatusCode())
	require.NotNil(t, missing.JSON404)
}

func TestRetiredVoiceAnswers404Everywhere(t *testing.T) {
	h := newHarness(t)
	for _, id := range []string{"8126c60a-76d6-450b-a3da-617d8ea44b4f", "noah-classic-narrator"} {
		resp, err := h.client(keyA).GetVoiceWithResponse(context.Background(), id)
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode(), id)
		fav, err := h.client(keyA).FavoriteVoiceWithResponse(context.Background(), id)
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, fav.StatusCode(), id)
		gen := h.create(keyA, "audio/voiceover", map[string]any{"voiceId": id, "script": "hi"})
		assert.Equal(t, http.StatusBadRequest, gen.StatusCode(), id)
	}
	for _, v := range h.listVoices(keyA, nil) {
		assert.NotEqual(t, "noah-classic-narrator", v.Slug, "not listed")
	}
}

func TestVoiceFilters(t *testing.T) {
	h := newHarness(t)
	owner := func(s string) *api.ListVoicesParams { return &api.ListVoicesParams{Owner: &s} }
	for _, bad := range []string{"me", "", "SERVICE"} {
		resp, err := h.client(keyA).ListVoicesWithResponse(context.Background(), owner(bad))
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode(), bad)
	}
	assert.Empty(t, h.listVoices(keyA, owner("project")))
	assert.NotEmpty(t, h.listVoices(keyA, owner("service")))

	tags := []string{"female", "narration"}
	for _, v := range h.listVoices(keyA, &api.ListVoicesParams{Tag: tags}) {
		assert.Subset(t, v.Tags, tags)
	}
	assert.NotEmpty(t, h.listVoices(keyA, &api.ListVoicesParams{Tag: tags}))

	loc := "en-US"
	us := h.listVoices(keyA, &api.ListVoicesParams{Locale: &loc})
	require.NotEmpty(t, us)
	for _, v := range us {
		assert.Equal(t, "en-US", v.Locale)
	}
	prefix := "en"
	assert.Empty(t, h.listVoices(keyA, &api.ListVoicesParams{Locale: &prefix}), "exact match, not a prefix")
}

func TestVoiceFavorites(t *testing.T) {
	h := newHarness(t)
	c := h.client(keyA)
	for range 2 {
		resp, err := c.FavoriteVoiceWithResponse(context.Background(), "ava-warm-narrator")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode())
		assert.Equal(t, api.FavoriteState{ID: avaID, Favorite: true}, *resp.JSON200)
	}
	for _, v := range []string{"1", "true", "yes", "YES"} {
		favs := h.listVoices(keyA, &api.ListVoicesParams{Favorites: ptr(v)})
		require.Len(t, favs, 1, v)
		assert.True(t, favs[0].Favorite)
	}
	no := "no"
	assert.Greater(t, len(h.listVoices(keyA, &api.ListVoicesParams{Favorites: ptr(no)})), 1)
	v, err := c.GetVoiceWithResponse(context.Background(), avaID)
	require.NoError(t, err)
	assert.True(t, v.JSON200.Voice.Favorite)

	yes := "1"
	assert.Empty(t, h.listVoices(keyB, &api.ListVoicesParams{Favorites: ptr(yes)}), "starring is per project")

	for range 2 {
		resp, err := c.UnfavoriteVoiceWithResponse(context.Background(), avaID)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode())
		assert.Equal(t, api.FavoriteState{ID: avaID, Favorite: false}, *resp.JSON200)
	}
	assert.Empty(t, h.listVoices(keyA, &api.ListVoicesParams{Favorites: ptr(yes)}))

	resp, err := c.FavoriteVoiceWithResponse(context.Background(), "no-such-voice")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode())
	un, err := c.UnfavoriteVoiceWithResponse(context.Background(), "no-such-voice")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, un.StatusCode())
}

func TestVoiceCloneLifecycle(t *testing.T) {
	h := newHarness(t)
	audio := h.sample(keyA, 12*time.Second)
	got := h.cloneVoice(keyA, "My voice", audio)
	require.Equal(t, http.StatusOK, got.status, got.body)
	v := got.voice
	assert.Equal(t, mediagen.VoiceOwnerProject, v.Owner)
	require.NotZero(t, v.Status)
	assert.Equal(t, mediagen.VoiceStatusRunning, v.Status)
	assert.Equal(t, "My voice", v.Name)
	assert.Zero(t, v.Slug)
	assert.Zero(t, v.Preview)
	assert.Equal(t, 99.0, h.srv.Balance(keyA))

	// A training clone cannot voice a generation yet.
	resp := h.create(keyA, "audio/voiceover", map[string]any{"voiceId": v.ID, "script": "hi"})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode())
	assert.Contains(t, resp.JSON400.Error.Message, "training")

	list := h.listVoices(keyA, nil)
	assert.Equal(t, v.ID, list[0].ID, "clones first")
	loc := "xx-XX"
	assert.Equal(t, v.ID, h.listVoices(keyA, &api.ListVoicesParams{Locale: &loc})[0].ID, "locale ignores clones")
	assert.Empty(t, h.listVoices(keyB, &api.ListVoicesParams{Owner: ptr("project")}), "tenant isolation")
	other, err := h.client(keyB).GetVoiceWithResponse(context.Background(), v.ID)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, other.StatusCode())

	h.advance(31 * time.Second)
	done, err := h.client(keyA).GetVoiceWithResponse(context.Background(), v.ID)
	require.NoError(t, err)
	assert.Equal(t, mediagen.VoiceStatusDone, done.JSON200.Voice.Status)
	require.NotZero(t, done.JSON200.Voice.ResponseDate)
	evs := h.recorded()
	require.Len(t, evs, 1)
	assert.Equal(t, "voice.done", evs[0].Name)
	assert.Equal(t, done.JSON200.Voice, *evs[0].Voice)
	h.mustCreate(keyA, "audio/voiceover", map[string]any{"voiceId": v.ID, "script": "hi"})
	resp = h.create(keyB, "audio/voiceover", map[string]any{"voiceId": v.ID, "script": "hi"})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode(), "another project's clone")

	del, err := h.client(keyB).DeleteVoiceWithResponse(context.Background(), v.ID)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, del.StatusCode())
	del, err = h.client(keyA).DeleteVoiceWithResponse(context.Background(), v.ID)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, del.StatusCode())
	assert.True(t, del.JSON200.Success)
	gone, err := h.client(keyA).GetVoiceWithResponse(context.Background(), v.ID)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, gone.StatusCode())
	resp = h.create(keyA, "audio/voiceover", map[string]any{"voiceId": v.ID, "script": "hi"})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode(), "the id stops resolving everywhere")

	del, err = h.client(keyA).DeleteVoiceWithResponse(context.Background(), avaID)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, del.StatusCode(), "catalog voices cannot be deleted")
}

func ptr[T any](v T) *T { return &v }

func TestVoiceCloneFailureRefunds(t *testing.T) {
	for _, outcome := range []Outcome{OutcomeError, OutcomeTimeout} {
		t.Run(string(outcome), func(t *testing.T) {
			h := newHarness(t, WithOutcome(func(f string) Outcome {
				if f == feature.VoiceClone {
					return outcome
				}
				return OutcomeDone
			}))
			got := h.cloneVoice(keyA, "v", h.sample(keyA, 30*time.Second))
			require.Equal(t, http.StatusOK, got.status)
			h.advance(time.Minute)
			h.advance(time.Minute)
			v, err := h.client(keyA).GetVoiceWithResponse(context.Background(), got.voice.ID)
			require.NoError(t, err)
			assert.Equal(t, mediagen.VoiceStatusError, v.JSON200.Voice.Status)
			require.NotNil(t, v.JSON200.Voice.Error)
			assert.Equal(t, 100.0, h.srv.Balance(keyA))
			evs := h.recorded()
			require.Len(t, evs, 1)
			assert.Equal(t, "voice.error", evs[0].Name)
		})
	}
}

func TestVoiceCloneValidation(t *testing.T) {
	h := newHarness(t)
	long := h.sample(keyA, 12*time.Second)
	short := h.sample(keyA, 9*time.Second)
	img := h.uploadImage(keyA)
	for name, tc := range map[string]struct{ name, audio string }{
		"missing name":    {"", long},
		"blank name":      {"  ", long},
		"missing audio":   {"v", ""},
		"unknown file":    {"v", "file_nope"},
		"too short":       {"v", short},
		"not audio":       {"v", img},
		"other's project": {"v", h.sample(keyB, 12*time.Second)},
	} {
		t.Run(name, func(t *testing.T) {
			got := h.cloneVoice(keyA, tc.name, tc.audio)
			assert.Equal(t, http.StatusBadRequest, got.status, got.body)
		})
	}
	assert.Equal(t, 100.0, h.srv.Balance(keyA))

	h.srv.SetBalance(keyA, 0.5)
	got := h.cloneVoice(keyA, "v", long)
	assert.Equal(t, http.StatusPaymentRequired, got.status)
	assert.Contains(t, got.body, `"required":1`)
	assert.Contains(t, got.body, `"message":"this call costs 1.00 USD; the balance is 0.50 USD"`)
}

func TestAtMostFiveClonesTrain(t *testing.T) {
	h := newHarness(t)
	audio := h.sample(keyA, 12*time.Second)
	for i := range 5 {
		key := keyA
		if i == 4 {
			key, audio = keyB, h.sample(keyB, 12*time.Second) // the limit is per organization
		}
		got := h.cloneVoice(key, "v", audio)
		require.Equal(t, http.StatusOK, got.status, got.body)
		h.advance(2 * time.Second)
	}
	got := h.cloneVoice(keyA, "sixth", h.sample(keyA, 12*time.Second))
	require.Equal(t, http.StatusTooManyRequests, got.status)
	assert.Contains(t, got.body, "rate_limited")
	assert.Equal(t, "20", got.retry, "until the first training ends")
	assert.Equal(t, 100-4.0, h.srv.Balance(keyA), "nothing charged on 429")

	secs, err := strconv.Atoi(got.retry)
	require.NoError(t, err)
	h.advance(time.Duration(secs) * time.Second)
	got = h.cloneVoice(keyA, "sixth", h.sample(keyA, 12*time.Second))
	assert.Equal(t, http.StatusOK, got.status, got.body)
}
