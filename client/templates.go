package client

import (
	"context"
	"slices"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
)

// TemplateFilter selects templates. The zero value lists the templates of
// [mediagen.FeatureImageSelfPortrait], the service's default.
type TemplateFilter struct {
	Feature     mediagen.Feature // either spelling; "" means image/self-portrait
	Category    string           // only this category, e.g. "motion" for logo reveals
	Titles      []string         // only these titles, exact match
	PerCategory int              // at most this many of each category, 1 to 50; 0 for no cap
	Limit       int              // at most this many in all, 1 to 500; 0 for no cap
}

// Templates lists templates in creation order.
func (c *Client) Templates(ctx context.Context, f TemplateFilter, opts ...Option) ([]*mediagen.Template, error) {
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
	q := api.ListTemplatesParams{Feature: nonZero(string(f.Feature)), Category: nonZero(f.Category), Title: slices.Clone(f.Titles),
		PerCategory: nonZero(f.PerCategory), Limit: nonZero(f.Limit)}
	list, _, err := send[api.TemplateList](ctx, c, cfg, api.NewListTemplatesRequest, &q)
	if err != nil {
		return nil, err
	}
	return pointers(list.Templates), nil
}

// TemplatePrompt resolves a template preview (an id from
// [mediagen.Template].Previews) to its prompt, the exact string to send as
// the prompt argument.
func (c *Client) TemplatePrompt(ctx context.Context, previewID string, opts ...Option) (*mediagen.TemplatePreview, error) {
	cfg, err := c.configureID("preview", previewID, opts)
	if err != nil {
		return nil, err
	}
	env, _, err := send[api.TemplatePreviewEnvelope](ctx, c, cfg, api.NewGetTemplatePreviewRequest, previewID)
	if err != nil {
		return nil, err
	}
	return &env.Preview, nil
}

// pointers returns pointers to the elements of s, which it keeps alive.
func pointers[T any](s []T) []*T {
	out := make([]*T, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}

// nonZero returns &v, or nil for the zero value: a parameter left out.
func nonZero[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}
