package client

import (
	"context"
	"fmt"
	"slices"

	"github.com/mediagen/mediagen-go/internal/api/model"
)

// TemplateFilter selects templates. The zero value lists the templates of
// [FeatureSelfPortrait], the service's default.
type TemplateFilter struct {
	Feature     string   // either spelling; "" means image/self-portrait
	Category    string   // only this category, e.g. "motion" for logo reveals
	Titles      []string // only these titles, exact match
	PerCategory int      // at most this many of each category, 1 to 50; 0 for no cap
	Limit       int      // at most this many in all, 1 to 500; 0 for no cap
}

// Templates lists templates in creation order.
func (c *Client) Templates(ctx context.Context, f TemplateFilter) ([]Template, error) {
	var q model.ListTemplatesParams
	if f.Feature != "" {
		q.Feature = &f.Feature
	}
	if f.Category != "" {
		q.Category = &f.Category
	}
	if len(f.Titles) > 0 {
		titles := slices.Clone(f.Titles)
		q.Title = &titles
	}
	if f.PerCategory != 0 {
		q.PerCategory = &f.PerCategory
	}
	if f.Limit != 0 {
		q.Limit = &f.Limit
	}
	resp, err := c.api.ListTemplates(ctx, &q)
	var list model.TemplateList
	if err := c.decode(ctx, resp, err, &list); err != nil {
		return nil, err
	}
	return list.Templates, nil
}

// TemplatePrompt resolves a template preview (an id from
// [Template].Previews) to its prompt, the exact string to send as the
// prompt argument.
func (c *Client) TemplatePrompt(ctx context.Context, previewID string) (*TemplatePreview, error) {
	if previewID == "" {
		return nil, fmt.Errorf("%w: empty preview id", ErrInvalidArgument)
	}
	resp, err := c.api.GetTemplatePreview(ctx, previewID)
	var env model.TemplatePreviewEnvelope
	if err := c.decode(ctx, resp, err, &env); err != nil {
		return nil, err
	}
	return &env.Preview, nil
}
