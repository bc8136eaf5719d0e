package client

import (
	"context"
	"fmt"
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
	q := api.ListTemplatesParams{Feature: string(f.Feature), Category: f.Category, Title: slices.Clone(f.Titles)}
	if f.PerCategory != 0 {
		q.PerCategory = &f.PerCategory
	}
	if f.Limit != 0 {
		q.Limit = &f.Limit
	}
	r, err := fromGenerated(api.NewListTemplatesRequest(c.server, &q))
	if err != nil {
		return nil, err
	}
	var list api.TemplateList
	if _, err := c.do(ctx, cfg, r, &list); err != nil {
		return nil, err
	}
	return pointers(list.Templates), nil
}

// TemplatePrompt resolves a template preview (an id from
// [mediagen.Template].Previews) to its prompt, the exact string to send as the
// prompt argument.
func (c *Client) TemplatePrompt(ctx context.Context, previewID string, opts ...Option) (*mediagen.TemplatePreview, error) {
	if previewID == "" {
		return nil, fmt.Errorf("%w: empty preview id", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
	r, err := fromGenerated(api.NewGetTemplatePreviewRequest(c.server, previewID))
	if err != nil {
		return nil, err
	}
	var env api.TemplatePreviewEnvelope
	if _, err := c.do(ctx, cfg, r, &env); err != nil {
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
