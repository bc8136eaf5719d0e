package catalog

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	slugRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)+$`)
	tagRE  = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

func TestVoiceCatalogInvariants(t *testing.T) {
	live := Voices()
	require.GreaterOrEqual(t, len(live), 14)

	ids, slugs := map[string]bool{}, map[string]bool{}
	retired := 0
	for _, v := range voices { // retired voices too: their ids must never be reused
		assert.Regexp(t, uuidRE, v.ID, v.Slug)
		assert.Regexp(t, slugRE, v.Slug)
		assert.False(t, ids[v.ID], "duplicate id %s", v.ID)
		assert.False(t, slugs[v.Slug], "duplicate slug %s", v.Slug)
		assert.False(t, ids[v.Slug] || slugs[v.ID], "an id and a slug must not collide")
		ids[v.ID], slugs[v.Slug] = true, true
		if v.Retired {
			retired++
		}
	}
	assert.Equal(t, 1, retired, "exactly one retired voice")
	assert.Len(t, live, len(voices)-retired)

	categories, locales, genders := map[string]int{}, map[string]int{}, map[string]int{}
	for _, v := range live {
		assert.False(t, v.Retired)
		assert.NotEmpty(t, v.Name, v.Slug)
		assert.NotEmpty(t, v.Description, v.Slug)
		assert.Regexp(t, `^[a-z]{2}-[A-Z]{2}$`, v.Locale, v.Slug)
		assert.Contains(t, []string{"female", "male", "neutral"}, v.Gender, v.Slug)
		assert.Contains(t, []string{"narration", "conversational", "character", "creature"}, v.Category, v.Slug)
		require.GreaterOrEqual(t, len(v.Tags), 5, "gender, age, accent, style, category: %s", v.Slug)
		assert.Equal(t, v.Gender, v.Tags[0], "gender tag comes first: %s", v.Slug)
		assert.Equal(t, v.Category, v.Tags[len(v.Tags)-1], "category tag comes last: %s", v.Slug)
		seen := map[string]bool{}
		for _, tag := range v.Tags {
			assert.Regexp(t, tagRE, tag, v.Slug)
			assert.Equal(t, strings.ToLower(tag), tag)
			assert.False(t, seen[tag], "duplicate tag %q on %s", tag, v.Slug)
			seen[tag] = true
		}
		categories[v.Category]++
		locales[v.Locale]++
		genders[v.Gender]++
	}
	assert.Len(t, categories, 4, "every category present")
	assert.GreaterOrEqual(t, len(locales), 5)
	assert.Positive(t, genders["female"])
	assert.Positive(t, genders["male"])
	assert.Positive(t, genders["neutral"])
}

func TestRetiredVoiceIsHidden(t *testing.T) {
	var gone Voice
	for _, v := range voices {
		if v.Retired {
			gone = v
		}
	}
	require.NotEmpty(t, gone.ID)
	for _, v := range Voices() {
		assert.NotEqual(t, gone.ID, v.ID)
	}
	for _, key := range []string{gone.ID, gone.Slug} {
		_, ok := LookupVoice(key)
		assert.False(t, ok, key)
	}
}

func TestLookupVoice(t *testing.T) {
	ava := "80cb22f0-6f42-4d9f-b729-57ddd40c66a8"
	for _, tc := range []struct {
		name, key, wantID string
	}{
		{"by uuid", ava, ava},
		{"by slug", "ava-warm-narrator", ava},
		{"another slug", "pip-forest-sprite", "89ca9974-bb79-4b71-8dc9-1412555bd8d1"},
		{"slug is case sensitive", "Ava-Warm-Narrator", ""},
		{"name is not a key", "Ava", ""},
		{"unknown uuid", "00000000-0000-4000-8000-000000000000", ""},
		{"empty", "", ""},
		{"retired uuid", "8126c60a-76d6-450b-a3da-617d8ea44b4f", ""},
		{"retired slug", "noah-classic-narrator", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := LookupVoice(tc.key)
			assert.Equal(t, tc.wantID != "", ok)
			assert.Equal(t, tc.wantID, v.ID)
		})
	}
}

func TestHasTags(t *testing.T) {
	v, ok := LookupVoice("ava-warm-narrator")
	require.True(t, ok)
	for _, tc := range []struct {
		name string
		tags []string
		want bool
	}{
		{"no filter", nil, true},
		{"one tag", []string{"female"}, true},
		{"all of several", []string{"narration", "american", "warm"}, true},
		{"one missing", []string{"female", "british"}, false},
		{"exact, not folded", []string{"Female"}, false},
		{"not a prefix", []string{"fem"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, v.HasTags(tc.tags))
		})
	}
}

func TestVoicesReturnsACopy(t *testing.T) {
	first := Voices()
	want := first[0].Name
	first[0].Name = "changed"
	first[0].Tags[0] = "changed"

	again := Voices()
	assert.Equal(t, want, again[0].Name)
	assert.Equal(t, again[0].Gender, again[0].Tags[0])

	v, _ := LookupVoice(again[0].Slug)
	v.Tags[0] = "changed"
	assert.Equal(t, again[0].Gender, Voices()[0].Tags[0], "LookupVoice returns a copy too")
}
