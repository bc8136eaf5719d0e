package client

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/charge"
	"github.com/mediagen/mediagen-go/internal/engine"
)

// VoiceFilter selects voices. The zero value lists the project's clones and
// then the whole catalog.
type VoiceFilter struct {
	Owner     mediagen.VoiceOwner // [mediagen.VoiceOwnerService] or [mediagen.VoiceOwnerProject]; "" for both
	Tags      []string            // the voice must carry every tag; catalog voices only
	Locale    string              // exact match such as "en-US", not a prefix; catalog voices only
	Favorites bool                // only voices the project starred
}

// Voices lists voices: the project's clones first, then the catalog. Tags
// and Locale filter catalog voices only; clones pass them unfiltered.
func (c *Client) Voices(ctx context.Context, f VoiceFilter, opts ...Option) ([]*mediagen.Voice, error) {
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
	list, _, err := c.listVoices(ctx, cfg, f)
	return list, err
}

func (c *Client) listVoices(ctx context.Context, cfg *config, f VoiceFilter) ([]*mediagen.Voice, *http.Response, error) {
	q := api.ListVoicesParams{Tag: slices.Clone(f.Tags), Owner: nonZero(string(f.Owner)), Locale: nonZero(f.Locale)}
	if f.Favorites {
		q.Favorites = nonZero("true")
	}
	list, resp, err := send[api.VoiceList](ctx, c, cfg, api.NewListVoicesRequest, &q)
	if err != nil {
		return nil, nil, err
	}
	return pointers(list.Voices), resp, nil
}

// GetVoice returns a voice by id, or a catalog voice by slug. A retired
// catalog voice and a deleted clone answer [ErrNotFound].
func (c *Client) GetVoice(ctx context.Context, id string, opts ...Option) (*mediagen.Voice, error) {
	cfg, err := c.configureID("voice", id, opts)
	if err != nil {
		return nil, err
	}
	return c.getVoice(ctx, cfg, id)
}

func (c *Client) getVoice(ctx context.Context, cfg *config, id string) (*mediagen.Voice, error) {
	env, _, err := send[api.VoiceEnvelope](ctx, c, cfg, api.NewGetVoiceRequest, id)
	if err != nil {
		return nil, err
	}
	return &env.Voice, nil
}

// CloneVoiceParams are the inputs of [Client.CloneVoice].
type CloneVoiceParams struct {
	Name        string // required
	Audio       string // file id of about 30 seconds of clean speech (at least 10); required
	Description string
}

// CloneVoice starts training a clone of the voice in the Audio sample and
// returns it running, charged now and refunded if training fails. Beyond 5
// training at once it fails with [ErrRateLimited]. [WithWebhookURL] asks
// for its voice.done or voice.error event. Like
// [Client.CreateGeneration] it never charges twice: after an ambiguous
// failure it returns the project's clone of the same name and description.
func (c *Client) CloneVoice(ctx context.Context, p CloneVoiceParams, opts ...Option) (*mediagen.Voice, error) {
	if p.Name == "" || p.Audio == "" {
		return nil, fmt.Errorf("%w: CloneVoice needs Name and Audio", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
	body := api.CreateVoiceRequest{Name: p.Name, Audio: p.Audio, Description: p.Description, WebhookURL: cfg.s.webhookURL}
	op := &cloneOp{c: c, cfg: cfg, p: p, body: &body}
	var rec journal.Record
	if cfg.s.idemKey != "" {
		rec = journal.Record{Op: "voice", Feature: string(mediagen.FeatureVoiceClone),
			Fingerprint: fingerprint("voice", p.Name, p.Description, p.Audio),
			Estimate:    c.prices.estimate(RawArgs{FeatureName: mediagen.FeatureVoiceClone})}
	}
	v, err := charge.Submit(ctx, c.proto, &cfg.charge, op, rec)
	if err != nil {
		return nil, uncertain(err, func(e *UncertainError) { e.Clone = &p })
	}
	return v, nil
}

// cloneOp is cloning a voice, for the charging protocol; body nil only
// searches.
type cloneOp struct {
	c    *Client
	cfg  *config
	p    CloneVoiceParams
	body *api.CreateVoiceRequest
}

func (o *cloneOp) What() string { return "voice clone" }

func (o *cloneOp) Post(ctx context.Context) (*mediagen.Voice, time.Time, error) {
	r, err := fromGenerated(api.NewCreateVoiceRequest(o.c.server, *o.body))
	if err != nil {
		return nil, time.Time{}, err
	}
	r.Class = engine.Charging
	var env api.VoiceEnvelope
	resp, err := o.c.do(ctx, o.cfg, r, &env)
	if err != nil {
		return nil, time.Time{}, err
	}
	if env.Voice.ID == "" {
		return nil, time.Time{}, newBodyError(resp, errNoID)
	}
	return &env.Voice, serverDate(resp), nil
}

func (o *cloneOp) ID(v *mediagen.Voice) string { return v.ID }

func (o *cloneOp) Requested(v *mediagen.Voice) time.Time { return v.RequestDate }

func (o *cloneOp) Key() string { return "voice\x00" + o.p.Name + "\x00" + o.p.Description }

func (o *cloneOp) Find(ctx context.Context, win charge.Window) ([]*mediagen.Voice, time.Time, error) {
	return o.c.findClones(ctx, o.c.searchConfig(o.cfg), o.p, win)
}

func (o *cloneOp) Get(ctx context.Context, id string) (*mediagen.Voice, error) {
	return o.c.getVoice(ctx, o.cfg, id)
}

// findClones returns the project's clones named and described as p and
// requested inside win, oldest first: the service does not echo the audio.
func (c *Client) findClones(ctx context.Context, cfg *config, p CloneVoiceParams, win charge.Window) ([]*mediagen.Voice, time.Time, error) {
	list, resp, err := c.listVoices(ctx, cfg, VoiceFilter{Owner: mediagen.VoiceOwnerProject})
	if err != nil {
		return nil, time.Time{}, err
	}
	bound := win.Bound(serverDate(resp), cfg.call.Clock.Now())
	list = slices.DeleteFunc(list, func(v *mediagen.Voice) bool {
		// A clone without a request date is kept: safer than charging twice.
		return v.Owner != mediagen.VoiceOwnerProject || v.Name != p.Name || v.Description != p.Description ||
			!v.RequestDate.IsZero() && v.RequestDate.Before(bound)
	})
	slices.SortStableFunc(list, func(a, b *mediagen.Voice) int { return a.RequestDate.Compare(b.RequestDate) })
	return list, bound, nil
}

// DeleteVoice deletes one of the project's clones, for good; catalog voices
// answer [ErrNotFound]. A retried delete that finds it gone reports success.
func (c *Client) DeleteVoice(ctx context.Context, id string, opts ...Option) error {
	return c.delete(ctx, "voice", id, opts, api.NewDeleteVoiceRequest)
}

// FavoriteVoice stars a voice, given by id or slug, for the project; it is
// idempotent.
func (c *Client) FavoriteVoice(ctx context.Context, id string, opts ...Option) error {
	return c.setFavorite(ctx, id, true, opts)
}

// UnfavoriteVoice removes the project's star from a voice, given by id or
// slug; it is idempotent.
func (c *Client) UnfavoriteVoice(ctx context.Context, id string, opts ...Option) error {
	return c.setFavorite(ctx, id, false, opts)
}

func (c *Client) setFavorite(ctx context.Context, id string, favorite bool, opts []Option) error {
	cfg, err := c.configureID("voice", id, opts)
	if err != nil {
		return err
	}
	build := api.NewUnfavoriteVoiceRequest
	if favorite {
		build = api.NewFavoriteVoiceRequest
	}
	st, _, err := send[api.FavoriteState](ctx, c, cfg, build, id)
	if err != nil {
		return err
	}
	if st.Favorite != favorite {
		return fmt.Errorf("mediagen: voice %s: the service answered favorite=%t", id, st.Favorite)
	}
	return nil
}
