// Package catalog holds the reference server's ready-made data, the catalog
// voices and the feature templates with their preview prompts, and the
// queries the voice and template endpoints answer with. It knows nothing of
// HTTP or URLs: the server signs audition, thumbnail and preview-video URLs
// itself from the ids found here.
package catalog

import "slices"

// Voice is one catalog voice. Catalog voices belong to the service, are the
// same for every project and have no lifecycle.
type Voice struct {
	ID          string   // fixed lowercase UUID; never changes, since callers store it
	Slug        string   // stable handle accepted wherever ID is
	Name        string   // display name
	Description string   // one sentence on the voice and what it suits
	Locale      string   // BCP 47 tag, e.g. "en-GB"; filters match it exactly
	Gender      string   // "female", "male" or "neutral"
	Category    string   // "narration", "conversational", "character" or "creature"
	Tags        []string // lowercase, in the order gender, age, accent, styles, category
	Retired     bool     // kept so old ids keep resolving to a deliberate 404
}

// HasTags reports whether v carries every tag in tags. Comparison is exact:
// tags are stored lowercase and the tag filter does not fold case.
func (v Voice) HasTags(tags []string) bool {
	for _, t := range tags {
		if !slices.Contains(v.Tags, t) {
			return false
		}
	}
	return true
}

// Voices returns the live catalog (retired voices left out) in its stable
// listing order. The result is a fresh copy, tags included.
func Voices() []Voice {
	out := make([]Voice, 0, len(voices))
	for _, v := range voices {
		if !v.Retired {
			out = append(out, v.clone())
		}
	}
	return out
}

// LookupVoice finds a live catalog voice by UUID or slug. A retired voice is
// reported as unknown so that every route answers 404 for it.
func LookupVoice(idOrSlug string) (Voice, bool) {
	for _, v := range voices {
		if v.ID == idOrSlug || v.Slug == idOrSlug {
			if v.Retired {
				return Voice{}, false
			}
			return v.clone(), true
		}
	}
	return Voice{}, false
}

func (v Voice) clone() Voice {
	v.Tags = slices.Clone(v.Tags)
	return v
}

// voices is the catalog in listing order. IDs were generated once and are
// frozen: a voice id in a user's saved generation must keep meaning the same
// voice.
var voices = []Voice{
	{
		ID: "80cb22f0-6f42-4d9f-b729-57ddd40c66a8", Slug: "ava-warm-narrator", Name: "Ava",
		Description: "A warm, unhurried American voice for audiobooks, documentaries and long-form explainers.",
		Locale:      "en-US", Gender: "female", Category: "narration",
		Tags: []string{"female", "middle-aged", "american", "warm", "calm", "narration"},
	},
	{
		ID: "62fff951-2ec9-4503-9acb-6f303a11a05d", Slug: "james-documentary-narrator", Name: "James",
		Description: "A deep, measured British baritone with the gravitas of a nature documentary.",
		Locale:      "en-GB", Gender: "male", Category: "narration",
		Tags: []string{"male", "old", "british", "deep", "authoritative", "narration"},
	},
	{
		ID: "8da02ca8-bd69-46b6-af7c-873134b7cd8e", Slug: "elodie-soft-storyteller", Name: "Élodie",
		Description: "A soft, intimate Parisian voice for bedtime stories, poetry and gentle narration.",
		Locale:      "fr-FR", Gender: "female", Category: "narration",
		Tags: []string{"female", "young", "french", "soft", "intimate", "narration"},
	},
	{
		ID: "95032ff8-1ed4-4c7f-9ce8-9bd743938703", Slug: "klaus-crisp-newsreader", Name: "Klaus",
		Description: "A crisp, precise German newsreader voice for bulletins, corporate reports and training.",
		Locale:      "de-DE", Gender: "male", Category: "narration",
		Tags: []string{"male", "middle-aged", "german", "crisp", "authoritative", "narration"},
	},
	{
		ID: "cd54bd9f-916a-491e-9d5b-d51fb75c981f", Slug: "mia-friendly-guide", Name: "Mia",
		Description: "A bright, upbeat American voice that sounds like a friend showing you around an app.",
		Locale:      "en-US", Gender: "female", Category: "conversational",
		Tags: []string{"female", "young", "american", "friendly", "upbeat", "conversational"},
	},
	{
		ID: "1b25b653-a327-4ee5-b370-1d1fb1a5293e", Slug: "oliver-podcast-host", Name: "Oliver",
		Description: "A relaxed London voice with an easy, chatty rhythm for podcasts and vlogs.",
		Locale:      "en-GB", Gender: "male", Category: "conversational",
		Tags: []string{"male", "young", "british", "casual", "conversational"},
	},
	{
		ID: "be4ab77b-113e-4b41-a5cd-ac1121f389ec", Slug: "lucia-support-agent", Name: "Lucía",
		Description: "A patient, reassuring Castilian voice for customer support lines and onboarding calls.",
		Locale:      "es-ES", Gender: "female", Category: "conversational",
		Tags: []string{"female", "middle-aged", "spanish", "friendly", "reassuring", "conversational"},
	},
	{
		ID: "0037c65d-3090-492d-bc9e-bc23f5ab284f", Slug: "kenji-calm-assistant", Name: "Kenji",
		Description: "A calm, polite Tokyo voice suited to assistants, announcements and product tours.",
		Locale:      "ja-JP", Gender: "male", Category: "conversational",
		Tags: []string{"male", "young", "japanese", "calm", "polite", "conversational"},
	},
	{
		ID: "c7bf0c9c-7d8c-4a8f-9985-63ea3cd01acf", Slug: "hanna-clear-tutor", Name: "Hanna",
		Description: "A clear, encouraging German voice for lessons, tutorials and e-learning modules.",
		Locale:      "de-DE", Gender: "female", Category: "conversational",
		Tags: []string{"female", "young", "german", "clear", "encouraging", "conversational"},
	},
	{
		ID: "98c9b626-16b4-48bf-b0d8-b110d4c9b8df", Slug: "rosa-gentle-grandmother", Name: "Rosa",
		Description: "A gentle, crackling Andalusian grandmother who tells family tales by the fire.",
		Locale:      "es-ES", Gender: "female", Category: "character",
		Tags: []string{"female", "old", "andalusian", "gentle", "raspy", "character"},
	},
	{
		ID: "0adc331f-eb56-4586-a858-b0573b614f43", Slug: "jack-outback-ranger", Name: "Jack",
		Description: "A sun-worn Australian ranger with a dry sense of humour, for adventure and games.",
		Locale:      "en-AU", Gender: "male", Category: "character",
		Tags: []string{"male", "middle-aged", "australian", "rugged", "humorous", "character"},
	},
	{
		ID: "35997630-2030-4168-8d8e-89854e10a760", Slug: "yuki-spirited-heroine", Name: "Yuki",
		Description: "An energetic, spirited heroine voice for animation, games and playful promos.",
		Locale:      "ja-JP", Gender: "female", Category: "character",
		Tags: []string{"female", "young", "japanese", "energetic", "playful", "character"},
	},
	{
		ID: "0cc2a737-79eb-4c37-b71a-eae19691b272", Slug: "baron-voss-villain", Name: "Baron Voss",
		Description: "A silky, menacing aristocrat who savours every word; made for villains and trailers.",
		Locale:      "en-GB", Gender: "male", Category: "character",
		Tags: []string{"male", "old", "british", "sinister", "dramatic", "character"},
	},
	{
		ID: "5117e2c0-f917-45fc-8924-6a4e35e92a61", Slug: "grum-cave-troll", Name: "Grum",
		Description: "A slow, rumbling cave troll with gravel in his throat, for fantasy games and audio dramas.",
		Locale:      "en-US", Gender: "male", Category: "creature",
		Tags: []string{"male", "old", "american", "growling", "deep", "creature"},
	},
	{
		ID: "89ca9974-bb79-4b71-8dc9-1412555bd8d1", Slug: "pip-forest-sprite", Name: "Pip",
		Description: "An airy, giggling forest sprite that flits between whispers and chimes.",
		Locale:      "en-GB", Gender: "neutral", Category: "creature",
		Tags: []string{"neutral", "young", "british", "airy", "playful", "creature"},
	},
	{
		ID: "8126c60a-76d6-450b-a3da-617d8ea44b4f", Slug: "noah-classic-narrator", Name: "Noah",
		Description: "A classic American narrator voice, withdrawn from the catalog.",
		Locale:      "en-US", Gender: "male", Category: "narration",
		Tags:    []string{"male", "middle-aged", "american", "classic", "narration"},
		Retired: true,
	},
}
