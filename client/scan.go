package client

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/charge"
	"github.com/mediagen/mediagen-go/internal/retry"
)

// findGenerations returns the project's generations of feature whose params equal want, requested inside
// win, oldest first, with the bound used. Searches whose requests are the client's own share listings.
func (c *Client) findGenerations(ctx context.Context, cfg *config, feature mediagen.Feature, want map[string]any, win charge.Window) ([]*mediagen.Generation, time.Time, error) {
	key, err := json.Marshal(want)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("mediagen: search: %w", err)
	}
	shared := c.sharesListing(cfg)
	if shared {
		cfg = c.search
	}
	src := &generationSource{c: c, cfg: cfg, feature: feature}
	return c.listing.Find(ctx, string(feature), src, string(key), win, shared)
}

// generationSource pages the generations of one feature for a search.
type generationSource struct {
	c       *Client
	cfg     *config
	feature mediagen.Feature
}

func (s *generationSource) Page(ctx context.Context, cursor string) ([]*mediagen.Generation, string, time.Time, error) {
	pg, resp, err := s.c.listGenerations(ctx, s.cfg, ListParams{Feature: s.feature, Limit: maxPageSize, Cursor: cursor})
	if err != nil {
		return nil, "", time.Time{}, err
	}
	return pg.Generations, pg.NextCursor, serverDate(resp), nil
}

func (s *generationSource) Requested(g *mediagen.Generation) time.Time { return g.RequestDate }

// Key is the row's params as canonical JSON, equal exactly when the decoded params are. The row must
// echo the feature as the call spelled it.
func (s *generationSource) Key(g *mediagen.Generation) (string, bool) {
	if g.Feature != s.feature {
		return "", false
	}
	b, err := json.Marshal(map[string]any(g.Params))
	if err != nil {
		return "", false
	}
	return string(b), true
}

func (s *generationSource) Clock() retry.Clock   { return s.cfg.call.Clock }
func (s *generationSource) Logger() *slog.Logger { return s.cfg.call.Logger }

// sharesListing reports whether a call's list requests would be the client's own (no call's middleware,
// header, clock or WithResponseInto), so a listing sent for another call serves it.
func (c *Client) sharesListing(cfg *config) bool {
	b := c.search
	if cfg == b {
		return true
	}
	return cfg.s.responseInto == nil && len(cfg.s.middleware) == len(b.s.middleware) &&
		reflect.ValueOf(cfg.s.header).UnsafePointer() == reflect.ValueOf(b.s.header).UnsafePointer() &&
		sameClock(cfg.s.clock, b.s.clock)
}

// sameClock compares two clocks without panicking on an incomparable one.
func sameClock(a, b Clock) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}
