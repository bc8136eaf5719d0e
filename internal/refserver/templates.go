package refserver

import (
	"context"
	"errors"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/refserver/catalog"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// Template preview assets.
const (
	templateImageName = "image.png"
	templateVideoName = "video.mp4"
	templateVideoLen  = 5 * time.Second
)

// ListTemplates answers GET /v3/templates: the templates of one feature in
// creation order, filtered by category and titles, bounded per category and
// in total.
func (s *Server) ListTemplates(ctx context.Context, req api.ListTemplatesRequestObject) (api.ListTemplatesResponseObject, error) {
	if _, err := caller(ctx); err != nil {
		return err, nil
	}
	prm := req.Params
	q := catalog.TemplateQuery{
		Feature:  value(prm.Feature), // "" lists the default feature
		Category: value(prm.Category),
		Titles:   prm.Title,
	}
	var aerr *apiError
	if q.PerCategory, aerr = boundedParam("perCategory", prm.PerCategory, catalog.MaxPerCategory); aerr != nil {
		return aerr, nil
	}
	if q.Limit, aerr = boundedParam("limit", prm.Limit, catalog.MaxLimit); aerr != nil {
		return aerr, nil
	}
	list, err := catalog.Templates(q)
	switch {
	case errors.Is(err, catalog.ErrUnknownFeature):
		return invalidf("feature %q is not a feature; use one of %s", q.Feature, featureNames()), nil
	case err != nil:
		return invalidf("%s", err.Error()), nil
	}
	b := baseFrom(ctx)
	expires := s.clock.Now().Add(previewURLValidity)
	out := api.TemplateList{Templates: make([]mediagen.Template, len(list))}
	for i, t := range list {
		out.Templates[i] = s.templateView(t, b, expires)
	}
	return api.ListTemplates200JSONResponse(out), nil
}

// boundedParam reads an optional integer parameter that must lie in 1..hi;
// 0 when absent.
func boundedParam(name string, v *int, hi int) (int, *apiError) {
	if v == nil {
		return 0, nil
	}
	if *v < 1 || *v > hi {
		return 0, invalidf("%s must be an integer from 1 to %d", name, hi)
	}
	return *v, nil
}

// templateView renders a template with its preview URLs signed for base
// until expires.
func (s *Server) templateView(t catalog.Template, base string, expires time.Time) mediagen.Template {
	mt := mediagen.Template{ID: t.ID, Title: t.Title, Category: t.Category, Feature: mediagen.Feature(t.Feature),
		Previews: make([]mediagen.TemplatePreviewRef, len(t.Previews))}
	for j, pv := range t.Previews {
		ref := mediagen.TemplatePreviewRef{
			ID:     pv.ID,
			Gender: pv.Gender,
			Image:  s.assetURL(base, "templates", pv.ID, templateImageName, expires),
		}
		if pv.HasVideo {
			ref.Video = s.assetURL(base, "templates", pv.ID, templateVideoName, expires)
		}
		mt.Previews[j] = ref
	}
	return mt
}

// GetTemplatePreview answers GET /v3/templates/{previewId} with the prompt
// the preview was made from.
func (s *Server) GetTemplatePreview(ctx context.Context, req api.GetTemplatePreviewRequestObject) (api.GetTemplatePreviewResponseObject, error) {
	if _, err := caller(ctx); err != nil {
		return err, nil
	}
	t, pv, ok := catalog.LookupPreview(req.PreviewID)
	if !ok {
		return notFoundf("template preview %q not found", req.PreviewID), nil
	}
	return api.GetTemplatePreview200JSONResponse{Preview: mediagen.TemplatePreview{
		ID: pv.ID, TemplateID: t.ID, Title: t.Title, Feature: mediagen.Feature(t.Feature), Gender: pv.Gender, Prompt: pv.Prompt,
	}}, nil
}

// templateAsset makes a template preview's thumbnail or video.
func templateAsset(previewID, name string) ([]byte, string, *apiError) {
	_, pv, ok := catalog.LookupPreview(previewID)
	switch {
	case !ok:
	case name == templateImageName:
		return media.PNG(320, 180, previewID), mimePNG, nil
	case name == templateVideoName && pv.HasVideo:
		return media.Clip{Width: 1280, Height: 720, Duration: templateVideoLen, Palette: previewID, Seed: previewID}.MP4(), mimeMP4, nil
	}
	return nil, "", notFoundf("no such object")
}

// value is an optional query parameter's value, "" when absent.
func value(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
