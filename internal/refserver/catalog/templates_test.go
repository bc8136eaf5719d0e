package catalog

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/feature"
)

// all returns every template of a feature, unfiltered.
func all(t *testing.T, name string) []Template {
	t.Helper()
	list, err := Templates(TemplateQuery{Feature: name})
	require.NoError(t, err)
	return list
}

func TestTemplateCatalogInvariants(t *testing.T) {
	ids, previewIDs := map[string]bool{}, map[string]bool{}
	total := 0
	for _, f := range feature.All {
		t.Run(f.Name, func(t *testing.T) {
			list := all(t, f.Name)
			require.NotEmpty(t, list)
			total += len(list)

			perCategory, titles := map[string]int{}, map[string]bool{}
			for _, tpl := range list {
				assert.Regexp(t, `^tpl_[a-z0-9_]+$`, tpl.ID)
				assert.False(t, ids[tpl.ID], "duplicate template id %s", tpl.ID)
				ids[tpl.ID] = true
				assert.Equal(t, f.Name, tpl.Feature, "feature is canonical")
				assert.Regexp(t, `^[a-z0-9]+$`, tpl.Category)
				assert.NotEmpty(t, tpl.Title)
				assert.False(t, titles[tpl.Title], "title %q repeated within the feature", tpl.Title)
				titles[tpl.Title] = true
				perCategory[tpl.Category]++

				var genders []string
				for _, p := range tpl.Previews {
					assert.Regexp(t, `^pvw_[a-z0-9_]+$`, p.ID)
					assert.False(t, previewIDs[p.ID], "duplicate preview id %s", p.ID)
					previewIDs[p.ID] = true
					assert.Equal(t, f.Kind == "video", p.HasVideo, p.ID)
					assert.NotEmpty(t, p.Prompt, p.ID)
					assert.Equal(t, strings.TrimSpace(p.Prompt), p.Prompt, p.ID)
					genders = append(genders, p.Gender)
				}
				if f.Name == "image/self-portrait" || f.Name == "video/avatar" {
					require.Equal(t, []string{"female", "male"}, genders, tpl.ID)
					assert.NotEqual(t, tpl.Previews[0].Prompt, tpl.Previews[1].Prompt, "each gender has its own wording: %s", tpl.ID)
				} else {
					assert.Equal(t, []string{"any"}, genders, tpl.ID)
				}
			}
			assert.GreaterOrEqual(t, len(perCategory), 2, "categories")
			for c, n := range perCategory {
				assert.True(t, n >= 2 && n <= 4, "category %s has %d templates", c, n)
			}
		})
	}
	assert.Len(t, templates, total, "every template belongs to a known feature")
	assert.Len(t, previewIndex, len(previewIDs))
}

func TestLogoRevealCategories(t *testing.T) {
	var categories []string
	for _, tpl := range all(t, "video/logo-reveal") {
		if !slices.Contains(categories, tpl.Category) {
			categories = append(categories, tpl.Category)
		}
		// The prompt directs the motion around the logo; beat timing is the
		// duration argument's job, so no numbers belong in it.
		assert.NotRegexp(t, regexp.MustCompile(`[0-9]|(?i)\bseconds?\b|\blogo\b`), tpl.Previews[0].Prompt, tpl.ID)
	}
	assert.Equal(t, []string{"motion", "outro"}, categories)
}

func ids(list []Template) []string {
	out := make([]string, len(list))
	for i, t := range list {
		out[i] = t.ID
	}
	return out
}

func TestTemplatesQuery(t *testing.T) {
	logos := ids(all(t, "video/logo-reveal"))
	require.Len(t, logos, 7)
	motion, outro := logos[:4], logos[4:]
	portraits := ids(all(t, "image/self-portrait"))

	for _, tc := range []struct {
		name string
		q    TemplateQuery
		want []string
	}{
		{"default feature is self-portrait", TemplateQuery{}, portraits},
		{"legacy spelling", TemplateQuery{Feature: "logo-reveal"}, logos},
		{"legacy spelling of the default", TemplateQuery{Feature: "self-portrait"}, portraits},
		{"category", TemplateQuery{Feature: "video/logo-reveal", Category: "outro"}, outro},
		{"category is exact", TemplateQuery{Feature: "video/logo-reveal", Category: "Outro"}, []string{}},
		{"category of another feature", TemplateQuery{Feature: "video/logo-reveal", Category: "fantasy"}, []string{}},
		{"one title", TemplateQuery{Feature: "video/logo-reveal", Titles: []string{"Glitch Out"}}, []string{"tpl_logo_glitch_out"}},
		{"several titles, creation order", TemplateQuery{Feature: "video/logo-reveal", Titles: []string{"Glitch Out", "Neon Glow", "No Such Title"}},
			[]string{"tpl_logo_neon_glow", "tpl_logo_glitch_out"}},
		{"title is exact", TemplateQuery{Feature: "video/logo-reveal", Titles: []string{"neon glow"}}, []string{}},
		{"title and category", TemplateQuery{Feature: "video/logo-reveal", Category: "motion", Titles: []string{"Glitch Out", "Ink Spread"}},
			[]string{"tpl_logo_ink_spread"}},
		{"perCategory 1", TemplateQuery{Feature: "video/logo-reveal", PerCategory: 1}, []string{motion[0], outro[0]}},
		{"perCategory 2", TemplateQuery{Feature: "video/logo-reveal", PerCategory: 2}, []string{motion[0], motion[1], outro[0], outro[1]}},
		{"perCategory 50", TemplateQuery{Feature: "video/logo-reveal", PerCategory: 50}, logos},
		{"limit 1", TemplateQuery{Feature: "video/logo-reveal", Limit: 1}, logos[:1]},
		{"limit 500", TemplateQuery{Feature: "video/logo-reveal", Limit: 500}, logos},
		{"limit after perCategory", TemplateQuery{Feature: "video/logo-reveal", PerCategory: 1, Limit: 1}, []string{motion[0]}},
		{"limit after category", TemplateQuery{Feature: "logo-reveal", Category: "outro", Limit: 2}, outro[:2]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Templates(tc.q)
			require.NoError(t, err)
			require.NotNil(t, got, "an empty result is an empty list, not null")
			assert.Equal(t, tc.want, ids(got))
		})
	}
}

func TestTemplatesErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    TemplateQuery
		want error
	}{
		{"unknown feature", TemplateQuery{Feature: "video/unknown"}, ErrUnknownFeature},
		{"feature is case sensitive", TemplateQuery{Feature: "Logo-Reveal"}, ErrUnknownFeature},
		{"voice cloning is not a feature", TemplateQuery{Feature: feature.VoiceClone}, ErrUnknownFeature},
		{"perCategory 0 is unset", TemplateQuery{PerCategory: 0}, nil},
		{"perCategory 1", TemplateQuery{PerCategory: 1}, nil},
		{"perCategory 50", TemplateQuery{PerCategory: 50}, nil},
		{"perCategory 51", TemplateQuery{PerCategory: 51}, ErrOutOfRange},
		{"perCategory -1", TemplateQuery{PerCategory: -1}, ErrOutOfRange},
		{"limit 0 is unset", TemplateQuery{Limit: 0}, nil},
		{"limit 1", TemplateQuery{Limit: 1}, nil},
		{"limit 500", TemplateQuery{Limit: 500}, nil},
		{"limit 501", TemplateQuery{Limit: 501}, ErrOutOfRange},
		{"limit -1", TemplateQuery{Limit: -1}, ErrOutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Templates(tc.q)
			if tc.want == nil {
				require.NoError(t, err)
				assert.NotEmpty(t, got)
				return
			}
			require.ErrorIs(t, err, tc.want)
			assert.Nil(t, got)
		})
	}
}

func TestLookupPreview(t *testing.T) {
	for _, tc := range []struct {
		name, id, template, gender string
	}{
		{"logo reveal", "pvw_logo_neon_glow", "tpl_logo_neon_glow", "any"},
		{"portrait female", "pvw_portrait_film_noir_female", "tpl_portrait_film_noir", "female"},
		{"avatar male", "pvw_avatar_news_desk_male", "tpl_avatar_news_desk", "male"},
		{"voiceover", "pvw_voiceover_documentary", "tpl_voiceover_documentary", "any"},
		{"template id is not a preview id", "tpl_logo_neon_glow", "", ""},
		{"person preview needs its gender", "pvw_portrait_film_noir", "", ""},
		{"unknown", "pvw_nope", "", ""},
		{"empty", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tpl, p, ok := LookupPreview(tc.id)
			if tc.template == "" {
				assert.False(t, ok)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tc.template, tpl.ID)
			assert.Equal(t, tc.id, p.ID)
			assert.Equal(t, tc.gender, p.Gender)
			assert.Contains(t, tpl.Previews, p)
		})
	}

	// Every listed preview resolves back to its template.
	for _, f := range feature.All {
		for _, tpl := range all(t, f.Name) {
			for _, p := range tpl.Previews {
				gotT, gotP, ok := LookupPreview(p.ID)
				require.True(t, ok, p.ID)
				assert.Equal(t, tpl, gotT)
				assert.Equal(t, p, gotP)
			}
		}
	}
}

func TestTemplatesReturnCopies(t *testing.T) {
	q := TemplateQuery{Feature: "video/logo-reveal", Limit: 1}
	first, err := Templates(q)
	require.NoError(t, err)
	want := first[0].Previews[0].Prompt
	first[0].Previews[0].Prompt = "changed"
	first[0].Title = "changed"

	again, err := Templates(q)
	require.NoError(t, err)
	assert.Equal(t, want, again[0].Previews[0].Prompt)
	assert.Equal(t, "Neon Glow", again[0].Title)

	tpl, _, ok := LookupPreview(again[0].Previews[0].ID)
	require.True(t, ok)
	tpl.Previews[0].Prompt = "changed"
	_, p, _ := LookupPreview(again[0].Previews[0].ID)
	assert.Equal(t, want, p.Prompt)
}
