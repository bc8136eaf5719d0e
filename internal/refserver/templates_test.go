package refserver

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/feature"
)

// templates lists templates as project A.
func (h *harness) templates(p *api.ListTemplatesParams) (int, []mediagen.Template) {
	h.t.Helper()
	resp, err := h.client(keyA).ListTemplatesWithResponse(context.Background(), p)
	require.NoError(h.t, err)
	if resp.JSON200 == nil {
		return resp.StatusCode(), nil
	}
	return resp.StatusCode(), resp.JSON200.Templates
}

func TestTemplatesPerFeature(t *testing.T) {
	h := newHarness(t)
	status, def := h.templates(nil)
	require.Equal(t, http.StatusOK, status)
	require.NotEmpty(t, def)
	for _, tpl := range def {
		assert.Equal(t, mediagen.Feature("image/self-portrait"), tpl.Feature, "default feature")
	}
	for _, f := range feature.All {
		status, list := h.templates(&api.ListTemplatesParams{Feature: ptr(f.Legacy)})
		require.Equal(t, http.StatusOK, status)
		require.NotEmpty(t, list, f.Name)
		for i, tpl := range list {
			assert.Equal(t, mediagen.Feature(f.Name), tpl.Feature, "canonical key")
			require.NotEmpty(t, tpl.Previews)
			for _, pv := range tpl.Previews {
				assert.NotEmpty(t, pv.Gender)
				assert.NotEmpty(t, pv.Image)
				assert.Equal(t, f.Kind == "video", pv.Video != "", f.Name)
				if i > 0 {
					continue // fetching the first template's previews is enough
				}
				h.fetch(pv.Image, "image/png")
				if pv.Video != "" {
					h.fetch(pv.Video, "video/mp4")
				}
			}
		}
	}
	_, logos := h.templates(&api.ListTemplatesParams{Feature: ptr("video/logo-reveal")})
	cats := map[string]bool{}
	for _, tpl := range logos {
		cats[tpl.Category] = true
		for _, pv := range tpl.Previews {
			assert.Equal(t, "any", pv.Gender)
		}
	}
	assert.Equal(t, map[string]bool{"motion": true, "outro": true}, cats)
}

func TestTemplateFiltersAndBounds(t *testing.T) {
	h := newHarness(t)
	feat := "logo-reveal"
	_, outro := h.templates(&api.ListTemplatesParams{Feature: ptr(feat), Category: ptr("outro")})
	require.NotEmpty(t, outro)
	for _, tpl := range outro {
		assert.Equal(t, "outro", tpl.Category)
	}
	_, one := h.templates(&api.ListTemplatesParams{Feature: ptr(feat), PerCategory: ptr(1)})
	assert.Len(t, one, 2, "one per category")
	_, capped := h.templates(&api.ListTemplatesParams{Feature: ptr(feat), Limit: ptr(3)})
	assert.Len(t, capped, 3)
	titles := []string{outro[0].Title, "No Such Title"}
	_, byTitle := h.templates(&api.ListTemplatesParams{Feature: ptr(feat), Title: titles})
	require.Len(t, byTitle, 1)
	assert.Equal(t, outro[0].ID, byTitle[0].ID)

	for name, p := range map[string]*api.ListTemplatesParams{
		"perCategory 0":   {PerCategory: ptr(0)},
		"perCategory 51":  {PerCategory: ptr(51)},
		"limit 0":         {Limit: ptr(0)},
		"limit 501":       {Limit: ptr(501)},
		"unknown feature": {Feature: ptr("video/nope")},
	} {
		status, _ := h.templates(p)
		assert.Equal(t, http.StatusBadRequest, status, name)
	}
	status, _ := h.templates(&api.ListTemplatesParams{PerCategory: ptr(50), Limit: ptr(500)})
	assert.Equal(t, http.StatusOK, status)
	status, list := h.templates(&api.ListTemplatesParams{Feature: ptr("")})
	assert.Equal(t, http.StatusOK, status)
	require.NotEmpty(t, list)
	assert.Equal(t, mediagen.Feature("image/self-portrait"), list[0].Feature, "an empty feature lists the default")
}

func TestTemplatePreviewPrompt(t *testing.T) {
	h := newHarness(t)
	_, list := h.templates(&api.ListTemplatesParams{Feature: ptr("video/logo-reveal")})
	require.NotEmpty(t, list)
	tpl := list[0]
	resp, err := h.client(keyA).GetTemplatePreviewWithResponse(context.Background(), tpl.Previews[0].ID)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode())
	p := resp.JSON200.Preview
	assert.Equal(t, tpl.Previews[0].ID, p.ID)
	assert.Equal(t, tpl.ID, p.TemplateID)
	assert.Equal(t, tpl.Title, p.Title)
	assert.Equal(t, mediagen.Feature("video/logo-reveal"), p.Feature)
	assert.Equal(t, "any", p.Gender)
	require.NotEmpty(t, p.Prompt)
	h.mustCreate(keyA, "video/logo-reveal", map[string]any{"image": h.uploadImage(keyA), "prompt": p.Prompt})

	missing, err := h.client(keyA).GetTemplatePreviewWithResponse(context.Background(), "pvw_nope")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, missing.StatusCode())
	require.NotNil(t, missing.JSON404)
}
