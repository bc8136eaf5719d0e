package refserver

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/feature"
	"github.com/mediagen/mediagen-go/internal/refserver/catalog"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// Voice cloning rules.
const (
	maxTraining   = 5                // clones training at once, for the whole organization
	cloneTraining = 30 * time.Second // training time at scale 1
	minSample     = 10 * time.Second // shortest usable voice sample
	minSampleRate = 8000             // Hz: telephone speech
	maxSampleRate = 192000           // Hz: the highest studio rate
	// minSampleByteRate is the fewest bytes a second of sample that can
	// hold speech: 2 kbit/s, below the lowest speech codec the accepted
	// formats carry (Speex at 2.15 kbit/s). Lengths that containers
	// declare rather than count (Ogg granules, MP4 and WebM headers, the
	// byte rate of a compressed WAV) are held to it.
	minSampleByteRate  = 250
	voicePreviewName   = "preview.wav"
	voicePreviewLen    = 5 * time.Second
	trainingFailedMsg  = "training failed; the charge was refunded"
	trainingTimeoutMsg = "training timed out; the charge was refunded"
)

// clone is one of a project's cloned voices.
type clone struct {
	timer // the end of its training

	id          string
	projectID   string
	projectKey  string
	name        string
	description string
	webhookURL  string
	base        string
	charge      int64
	outcome     Outcome

	requestDate time.Time
	endAt       time.Time // training ends; the responseDate once it has
	status      mediagen.VoiceStatus
	errMsg      string
}

// before orders clones as lists show them, newest first.
func (c *clone) before(o *clone) bool {
	return newestFirst(c.requestDate, c.id, o.requestDate, o.id)
}

// newUUID returns a random RFC 4122 version 4 UUID, the shape of every
// voice id.
func newUUID() string {
	h := []byte(randomHex(16))
	h[12] = '4'
	h[16] = "89ab"[h[16]%4]
	return fmt.Sprintf("%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
}

// CreateVoice answers POST /v3/voices: validates the name and the sample,
// charges the clone price and starts training, at most 5 at once.
func (s *Server) CreateVoice(ctx context.Context, req api.CreateVoiceRequestObject) (api.CreateVoiceResponseObject, error) {
	p, aerr := caller(ctx)
	if aerr != nil {
		return aerr, nil
	}
	if req.Body == nil {
		return invalidf("the body must be a JSON object with name and audio"), nil
	}
	name := strings.TrimSpace(req.Body.Name)
	if name == "" {
		return invalidf("name is required"), nil
	}
	if !feature.Visible(name) {
		return invalidf("name has no visible character: it is all control, space or invisible format characters"), nil
	}
	if req.Body.Audio == "" {
		return invalidf("audio is required: the file id of a voice sample of at least 10 seconds"), nil
	}
	if err := s.checkWebhookURL(req.Body.WebhookURL); err != nil {
		return err, nil
	}
	outcome := s.outcome(feature.VoiceClone) // before s.mu, as in CreateGeneration

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	if err := s.checkVoiceSample(p, req.Body.Audio, now); err != nil {
		return err, nil
	}
	charge := cost(feature.VoiceClone, nil)
	if p.balance < charge {
		return insufficientBalance(charge, p.balance), nil
	}
	if wait, busy := s.trainingSlot(now); busy {
		e := newError(http.StatusTooManyRequests, api.ErrorCodeRateLimited, "%d voices are already training; retry in %d s", maxTraining, wait)
		e.retryAfter = wait
		return e, nil
	}
	p.balance -= charge
	c := &clone{
		id: newUUID(), projectID: p.id, projectKey: p.key, name: name,
		base: baseFrom(ctx), charge: charge, outcome: outcome,
		requestDate: now, endAt: now.Add(s.scaled(cloneTraining)), status: mediagen.VoiceStatusRunning,
		description: req.Body.Description, webhookURL: req.Body.WebhookURL,
	}
	s.clones[c.id] = c
	p.clones.Insert(c)
	s.training[c] = struct{}{}
	s.timers.schedule(c, c.endAt)
	return api.CreateVoice200JSONResponse{Voice: cloneView(c)}, nil
}

// checkVoiceSample explains why file id cannot be p's voice sample, or
// returns nil. The caller holds s.mu.
func (s *Server) checkVoiceSample(p *project, id string, now time.Time) *apiError {
	f, ok := s.liveFile(p, id, now)
	if !ok {
		return invalidf("audio: file %q not found (upload it first; files expire 24 hours after upload)", id)
	}
	if f.invalid != "" {
		return invalidf("audio: file %q is not a whole, valid sample: %s", id, f.invalid)
	}
	// The documented formats are MP3, WAV, M4A, OGG, FLAC or WebM: every
	// accepted audio type, and of the video containers WebM alone, when it
	// holds a real audio stream (a browser recording, say); AudioDuration
	// only succeeds when it does.
	if (f.kind != media.Audio && (f.kind != media.Video || f.mediaType != media.TypeWebM)) || f.audio <= 0 {
		return invalidf("audio: file %q is not MP3, WAV, M4A, OGG, FLAC or WebM with a readable audio stream (it holds %s)", id, f.mediaType)
	}
	if f.rate < minSampleRate || f.rate > maxSampleRate {
		return invalidf("audio: the sample has a sample rate of %d Hz; speech is recorded at %d to %d Hz", f.rate, minSampleRate, maxSampleRate)
	}
	if f.audio < minSample {
		return invalidf("audio: the sample is too short (%.1f s); send at least 10 seconds of clean speech, about 30 is best", f.audio.Seconds())
	}
	if float64(f.size) < f.audio.Seconds()*minSampleByteRate {
		return invalidf("audio: the file holds %d bytes for the %.1f s of audio it declares, too few for speech (at least %d bytes a second)",
			f.size, f.audio.Seconds(), minSampleByteRate)
	}
	return nil
}

// trainingSlot reports whether all training slots are taken and, if so,
// the seconds until the first frees up (at least 1). The caller holds s.mu.
func (s *Server) trainingSlot(now time.Time) (int, bool) {
	n := 0
	var first time.Time
	for c := range s.training { // at most maxTraining
		n++
		if first.IsZero() || c.endAt.Before(first) {
			first = c.endAt
		}
	}
	if n < maxTraining {
		return 0, false
	}
	return max(1, int(math.Ceil(first.Sub(now).Seconds()))), true
}

// advanceClone ends a clone's training when due, refunding a failure once.
// The caller holds s.mu.
func (s *Server) advanceClone(c *clone, now time.Time) (Event, bool) {
	if c.status != mediagen.VoiceStatusRunning || now.Before(c.endAt) {
		return Event{}, false
	}
	switch c.outcome {
	case OutcomeError, OutcomeTimeout:
		c.status, c.errMsg = mediagen.VoiceStatusError, trainingFailedMsg
		if c.outcome == OutcomeTimeout {
			c.errMsg = trainingTimeoutMsg
		}
		if p, ok := s.projects[c.projectKey]; ok {
			p.balance += c.charge
		}
	default:
		c.status = mediagen.VoiceStatusDone
	}
	if !s.wantsEvent(c.webhookURL) {
		return Event{}, false
	}
	view := cloneView(c)
	return Event{
		Name:          "voice." + string(c.status),
		ProjectAPIKey: c.projectKey,
		WebhookURL:    c.webhookURL,
		Voice:         &view,
	}, true
}

// cloneView renders a clone as GET answers it.
func cloneView(c *clone) mediagen.Voice {
	v := mediagen.Voice{ID: c.id, Owner: mediagen.VoiceOwnerProject, Name: c.name, Status: c.status,
		RequestDate: c.requestDate.UTC(), Description: c.description, Error: c.errMsg}
	if c.status != mediagen.VoiceStatusRunning {
		v.ResponseDate = c.endAt.UTC()
	}
	return v
}

// catalogView renders a catalog voice for one project: its favourite flag
// and a preview URL signed for about 6 hours. The caller holds s.mu.
func (s *Server) catalogView(v catalog.Voice, projectID, base string, now time.Time) mediagen.Voice {
	tags := append([]string{}, v.Tags...)
	fav := s.favorites[projectID][v.ID]
	preview := s.assetURL(base, "voices", v.ID, voicePreviewName, now.Add(previewURLValidity))
	return mediagen.Voice{
		ID: v.ID, Owner: mediagen.VoiceOwnerService, Name: v.Name, Description: v.Description,
		Slug: v.Slug, Tags: tags, Locale: v.Locale, Favorite: fav, Preview: preview,
	}
}

// ownClone returns the clone id when it belongs to p; other projects' clones
// do not exist for p. The caller holds s.mu.
func (s *Server) ownClone(p *project, id string) (*clone, bool) {
	c, ok := s.clones[id]
	if !ok || c.projectID != p.id {
		return nil, false
	}
	return c, true
}

// usableVoice explains why id cannot voice a generation of p, or returns
// nil. The caller holds s.mu.
func (s *Server) usableVoice(p *project, id string) error {
	if _, ok := s.lookupVoice(id); ok {
		return nil
	}
	c, ok := s.ownClone(p, id)
	if !ok {
		return fmt.Errorf("voice %q not found", id)
	}
	switch c.status {
	case mediagen.VoiceStatusDone:
		return nil
	case mediagen.VoiceStatusRunning:
		return fmt.Errorf("voice %q is still training", id)
	default:
		return fmt.Errorf("voice %q failed training and cannot be used", id)
	}
}

// truthy reports whether a favorites filter value asks for starred voices.
func truthy(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "yes":
		return true
	}
	return false
}

// ListVoices answers GET /v3/voices: the project's clones first (newest
// first), then the catalog in its order. tag and locale filter catalog rows
// only; favorites keeps starred catalog voices only.
func (s *Server) ListVoices(ctx context.Context, req api.ListVoicesRequestObject) (api.ListVoicesResponseObject, error) {
	p, aerr := caller(ctx)
	if aerr != nil {
		return aerr, nil
	}
	wantService, wantProject := true, true
	if o := req.Params.Owner; o != nil {
		switch *o {
		case string(mediagen.VoiceOwnerService):
			wantProject = false
		case string(mediagen.VoiceOwnerProject):
			wantService = false
		default:
			return invalidf("owner must be service or project, or omitted for both"), nil
		}
	}
	favOnly := truthy(value(req.Params.Favorites))
	tags := req.Params.Tag

	s.settle()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	out := api.VoiceList{Voices: []mediagen.Voice{}}
	if wantProject && !favOnly {
		for c := range p.clones.All() {
			out.Voices = append(out.Voices, cloneView(c))
		}
	}
	if wantService {
		for _, v := range s.catalogVoices() {
			if !v.HasTags(tags) ||
				(req.Params.Locale != nil && v.Locale != *req.Params.Locale) ||
				(favOnly && !s.favorites[p.id][v.ID]) {
				continue
			}
			out.Voices = append(out.Voices, s.catalogView(v, p.id, baseFrom(ctx), now))
		}
	}
	return api.ListVoices200JSONResponse(out), nil
}

// GetVoice answers GET /v3/voices/{id}: a catalog voice by uuid or slug, or
// one of the project's clones. Retired catalog voices answer 404.
func (s *Server) GetVoice(ctx context.Context, req api.GetVoiceRequestObject) (api.GetVoiceResponseObject, error) {
	p, aerr := caller(ctx)
	if aerr != nil {
		return aerr, nil
	}
	s.settle()
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.ownClone(p, req.ID); ok {
		return api.GetVoice200JSONResponse{Voice: cloneView(c)}, nil
	}
	if v, ok := s.lookupVoice(req.ID); ok {
		return api.GetVoice200JSONResponse{Voice: s.catalogView(v, p.id, baseFrom(ctx), s.clock.Now())}, nil
	}
	return notFoundf("voice %q not found", req.ID), nil
}

// DeleteVoice answers DELETE /v3/voices/{id}: only the project's own clones
// can be deleted; the id stops resolving everywhere.
func (s *Server) DeleteVoice(ctx context.Context, req api.DeleteVoiceRequestObject) (api.DeleteVoiceResponseObject, error) {
	p, aerr := caller(ctx)
	if aerr != nil {
		return aerr, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.ownClone(p, req.ID)
	if !ok {
		return notFoundf("voice %q is not one of this project's clones", req.ID), nil
	}
	delete(s.clones, c.id)
	p.clones.Remove(c)
	delete(s.training, c)
	s.timers.cancel(c)
	return api.DeleteVoice200JSONResponse{Success: true}, nil
}

// setFavorite stars or unstars a catalog voice for the project and returns
// the state after the call; both directions are idempotent.
func (s *Server) setFavorite(ctx context.Context, id string, on bool) (api.FavoriteState, *apiError) {
	p, aerr := caller(ctx)
	if aerr != nil {
		return api.FavoriteState{}, aerr
	}
	v, ok := s.lookupVoice(id)
	if !ok {
		return api.FavoriteState{}, notFoundf("voice %q is not a catalog voice", id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		if s.favorites[p.id] == nil {
			s.favorites[p.id] = map[string]bool{}
		}
		s.favorites[p.id][v.ID] = true
	} else {
		delete(s.favorites[p.id], v.ID)
	}
	return api.FavoriteState{ID: v.ID, Favorite: on}, nil
}

// FavoriteVoice answers PUT /v3/voices/{id}/favorite.
func (s *Server) FavoriteVoice(ctx context.Context, req api.FavoriteVoiceRequestObject) (api.FavoriteVoiceResponseObject, error) {
	st, err := s.setFavorite(ctx, req.ID, true)
	if err != nil {
		return err, nil
	}
	return api.FavoriteVoice200JSONResponse(st), nil
}

// UnfavoriteVoice answers DELETE /v3/voices/{id}/favorite.
func (s *Server) UnfavoriteVoice(ctx context.Context, req api.UnfavoriteVoiceRequestObject) (api.UnfavoriteVoiceResponseObject, error) {
	st, err := s.setFavorite(ctx, req.ID, false)
	if err != nil {
		return err, nil
	}
	return api.UnfavoriteVoice200JSONResponse(st), nil
}

// voicePreview makes the audition clip of a live catalog voice.
func (s *Server) voicePreview(id string) ([]byte, string, *apiError) {
	if _, ok := s.lookupVoice(id); !ok {
		return nil, "", notFoundf("no such object")
	}
	return media.WAV(voicePreviewLen, id), mimeWAV, nil
}
