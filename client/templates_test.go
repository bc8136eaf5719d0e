package client_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

func TestTemplates(t *testing.T) {
	_, c, ctx := setup(t)

	def, err := c.Templates(ctx, client.TemplateFilter{})
	require.NoError(t, err)
	require.NotEmpty(t, def)
	for _, tpl := range def {
		assert.Equal(t, mediagen.FeatureImageSelfPortrait, tpl.Feature, "the default feature")
	}

	reveals, err := c.Templates(ctx, client.TemplateFilter{Feature: "logo-reveal"})
	require.NoError(t, err)
	require.NotEmpty(t, reveals)
	canonical, err := c.Templates(ctx, client.TemplateFilter{Feature: mediagen.FeatureVideoLogoReveal})
	require.NoError(t, err)
	assert.Equal(t, reveals, canonical, "either spelling selects the same templates")

	cat := reveals[0].Category
	inCat, err := c.Templates(ctx, client.TemplateFilter{Feature: mediagen.FeatureVideoLogoReveal, Category: cat})
	require.NoError(t, err)
	for _, tpl := range inCat {
		assert.Equal(t, cat, tpl.Category)
	}
	one, err := c.Templates(ctx, client.TemplateFilter{Feature: mediagen.FeatureVideoLogoReveal, PerCategory: 1})
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, tpl := range one {
		assert.False(t, seen[tpl.Category], "at most one per category")
		seen[tpl.Category] = true
	}
	limited, err := c.Templates(ctx, client.TemplateFilter{Feature: mediagen.FeatureVideoLogoReveal, Limit: 2})
	require.NoError(t, err)
	assert.Len(t, limited, min(2, len(reveals)))
	titled, err := c.Templates(ctx, client.TemplateFilter{Feature: mediagen.FeatureVideoLogoReveal, Titles: []string{reveals[0].Title}})
	require.NoError(t, err)
	require.NotEmpty(t, titled)
	assert.Equal(t, reveals[0].Title, titled[0].Title)

	_, err = c.Templates(ctx, client.TemplateFilter{Feature: mediagen.FeatureVideoLogoReveal, PerCategory: 51})
	assert.ErrorIs(t, err, client.ErrInvalidArgument)

	require.NotEmpty(t, reveals[0].Previews)
	ref := reveals[0].Previews[0]
	assert.NotEmpty(t, ref.Video, "video features have preview videos")
	p, err := c.TemplatePrompt(ctx, ref.ID)
	require.NoError(t, err)
	assert.Equal(t, reveals[0].ID, p.TemplateID)
	assert.NotEmpty(t, p.Prompt)

	// The prompt is the exact string to send.
	img := uploadPNG(t, ctx, c)
	g, err := c.CreateGeneration(ctx, client.LogoRevealArgs{Image: img, Prompt: p.Prompt})
	require.NoError(t, err)
	assert.Equal(t, p.Prompt, g.Params["prompt"])

	_, err = c.TemplatePrompt(ctx, "pvw_missing")
	assert.ErrorIs(t, err, client.ErrNotFound)
}

// A filter left unset is not sent: an empty feature= or favorites= could
// read as a value to a stricter service (the default feature is its own).
func TestUnsetFiltersAreNotSent(t *testing.T) {
	srv, _, ctx := setup(t)
	var queries []string
	c := srv.Client(client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		queries = append(queries, req.URL.RawQuery)
		return next(req)
	}))
	_, err := c.Templates(ctx, client.TemplateFilter{})
	require.NoError(t, err)
	_, err = c.Voices(ctx, client.VoiceFilter{})
	require.NoError(t, err)
	_, err = c.Templates(ctx, client.TemplateFilter{Feature: mediagen.FeatureVideoLogoReveal, Category: "motion"})
	require.NoError(t, err)
	_, err = c.Voices(ctx, client.VoiceFilter{Favorites: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"", "", "feature=video%2Flogo-reveal&category=motion", "favorites=true"}, queries)
}
