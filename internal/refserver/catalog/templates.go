package catalog

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mediagen/mediagen-go/internal/feature"
)

// Errors returned by Templates; the server maps both to 400.
var (
	// ErrUnknownFeature means the feature filter names no feature in either
	// spelling.
	ErrUnknownFeature = errors.New("catalog: unknown feature")
	// ErrOutOfRange means PerCategory is outside 1..50 or Limit outside 1..500.
	ErrOutOfRange = errors.New("catalog: value out of range")
)

// Bounds of the template query, as the interface document states them.
const (
	MaxPerCategory = 50  // largest TemplateQuery.PerCategory
	MaxLimit       = 500 // largest TemplateQuery.Limit
)

// DefaultFeature is the feature listed when the query names none.
const DefaultFeature = "image/self-portrait"

// Preview is one ready-made rendition of a template. Person features carry
// one preview per gender because the prompt wording differs between them.
type Preview struct {
	ID       string // stable preview id, e.g. "pvw_logo_neon_glow"
	Gender   string // "female" or "male" for person features, else "any"
	Prompt   string // the exact string to send as args.prompt
	HasVideo bool   // video features also have a preview video
}

// Template is a ready-made style of one feature.
type Template struct {
	ID       string // stable template id, e.g. "tpl_logo_neon_glow"
	Title    string
	Category string
	Feature  string // canonical spelling
	Previews []Preview
}

// TemplateQuery filters Templates. Zero values mean "not set".
type TemplateQuery struct {
	Feature     string   // canonical or legacy spelling; "" means DefaultFeature
	Category    string   // exact match
	Titles      []string // exact match of any of them
	PerCategory int      // keep the first N of each category, 1..50
	Limit       int      // cap the total after the other filters, 1..500
}

// Templates lists the templates of one feature in creation order, filtered
// by q. Each result is a copy the caller may keep or change.
func Templates(q TemplateQuery) ([]Template, error) {
	name := q.Feature
	if name == "" {
		name = DefaultFeature
	}
	canonical := feature.Canonical(name)
	if canonical == "" {
		return nil, fmt.Errorf("%w %q", ErrUnknownFeature, q.Feature)
	}
	if q.PerCategory < 0 || q.PerCategory > MaxPerCategory {
		return nil, fmt.Errorf("%w: perCategory %d is not in 1..%d", ErrOutOfRange, q.PerCategory, MaxPerCategory)
	}
	if q.Limit < 0 || q.Limit > MaxLimit {
		return nil, fmt.Errorf("%w: limit %d is not in 1..%d", ErrOutOfRange, q.Limit, MaxLimit)
	}
	out := []Template{}
	seen := map[string]int{}
	for _, t := range templates {
		if t.Feature != canonical ||
			(q.Category != "" && t.Category != q.Category) ||
			(len(q.Titles) > 0 && !slices.Contains(q.Titles, t.Title)) {
			continue
		}
		if q.PerCategory > 0 && seen[t.Category] >= q.PerCategory {
			continue
		}
		seen[t.Category]++
		out = append(out, t.clone())
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

// LookupPreview finds a preview by id, with the template it belongs to.
func LookupPreview(previewID string) (Template, Preview, bool) {
	at, ok := previewIndex[previewID]
	if !ok {
		return Template{}, Preview{}, false
	}
	t := templates[at[0]]
	return t.clone(), t.Previews[at[1]], true
}

func (t Template) clone() Template {
	t.Previews = slices.Clone(t.Previews)
	return t
}

// templates holds every template in creation order; previewIndex maps a
// preview id to its template and position.
var templates, previewIndex = build(templateData)

// build turns the compact table into templates. Ids derive from the fixed
// prefixes and slugs, so they are as stable as the table itself.
func build(data []featureTemplates) ([]Template, map[string][2]int) {
	var list []Template
	index := map[string][2]int{}
	for _, ft := range data {
		info, _ := feature.Lookup(ft.feature)
		video := info.Kind == "video"
		for _, d := range ft.templates {
			key := ft.prefix + "_" + d.slug
			t := Template{ID: "tpl_" + key, Title: d.title, Category: d.category, Feature: info.Name}
			for _, p := range d.previews() {
				p.ID = "pvw_" + key
				if p.Gender != "any" {
					p.ID += "_" + p.Gender
				}
				p.HasVideo = video
				index[p.ID] = [2]int{len(list), len(t.Previews)}
				t.Previews = append(t.Previews, p)
			}
			list = append(list, t)
		}
	}
	return list, index
}

// featureTemplates is one feature's part of the table.
type featureTemplates struct {
	feature   string // canonical spelling
	prefix    string // short id prefix, unique per feature
	templates []templateDef
}

// templateDef is one row: prompt for non-person features, female and male
// wordings for person features.
type templateDef struct {
	category, slug, title string
	prompt                string
	female, male          string
}

func (d templateDef) previews() []Preview {
	var ps []Preview
	if d.female != "" {
		ps = append(ps, Preview{Gender: "female", Prompt: d.female})
	}
	if d.male != "" {
		ps = append(ps, Preview{Gender: "male", Prompt: d.male})
	}
	if d.prompt != "" {
		ps = append(ps, Preview{Gender: "any", Prompt: d.prompt})
	}
	return ps
}

var templateData = []featureTemplates{
	{feature: "image/self-portrait", prefix: "portrait", templates: []templateDef{
		{category: "professional", slug: "corporate_headshot", title: "Corporate Headshot",
			female: "Professional corporate headshot of the woman in the photo, tailored navy blazer over a silk blouse, soft key light from the left, neutral grey seamless backdrop, shallow depth of field, confident and approachable expression",
			male:   "Professional corporate headshot of the man in the photo, charcoal suit with an open-collar white shirt, soft key light from the left, neutral grey seamless backdrop, shallow depth of field, confident and approachable expression"},
		{category: "professional", slug: "studio_black_white", title: "Studio Black and White",
			female: "Classic black and white studio portrait of the woman in the photo, hair softly swept back, dramatic Rembrandt lighting, deep black background, fine film grain, timeless and elegant",
			male:   "Classic black and white studio portrait of the man in the photo, well-groomed hair and stubble, dramatic Rembrandt lighting, deep black background, fine film grain, timeless and rugged"},
		{category: "professional", slug: "creative_founder", title: "Creative Founder",
			female: "Editorial portrait of the woman in the photo as a startup founder, relaxed linen shirt, leaning against a sunlit brick wall in a loft office, warm natural window light, candid half smile",
			male:   "Editorial portrait of the man in the photo as a startup founder, relaxed knit sweater, leaning against a sunlit brick wall in a loft office, warm natural window light, candid half smile"},
		{category: "artistic", slug: "oil_painting", title: "Oil Painting",
			female: "Renaissance oil painting of the woman in the photo, velvet gown with a lace collar, pearl earrings, rich chiaroscuro, visible brushstrokes, dark green drapery behind her, museum gallery quality",
			male:   "Renaissance oil painting of the man in the photo, velvet doublet with a ruffled collar, gold chain of office, rich chiaroscuro, visible brushstrokes, dark green drapery behind him, museum gallery quality"},
		{category: "artistic", slug: "watercolor_sketch", title: "Watercolor Sketch",
			female: "Loose watercolor portrait of the woman in the photo, soft pastel washes bleeding into white paper, delicate ink linework on her features, flowers blooming at the edges",
			male:   "Loose watercolor portrait of the man in the photo, muted blue and ochre washes bleeding into white paper, confident ink linework on his features, splashes of paint at the edges"},
		{category: "artistic", slug: "film_noir", title: "Film Noir",
			female: "1940s film noir portrait of the woman in the photo as a mysterious singer, finger waves, satin evening gloves, venetian blind shadows across her face, cigarette smoke curling in the beam of a single lamp, black and white",
			male:   "1940s film noir portrait of the man in the photo as a hard-boiled detective, fedora and trench coat, venetian blind shadows across his face, cigarette smoke curling in the beam of a single lamp, black and white"},
		{category: "fantasy", slug: "elven_royalty", title: "Elven Royalty",
			female: "Fantasy portrait of the woman in the photo as an elven queen, delicate silver circlet with moonstones, flowing ivory robes, pointed ears, enchanted forest glowing behind her, ethereal soft light",
			male:   "Fantasy portrait of the man in the photo as an elven king, antler crown of woven silver, embroidered forest-green cloak, pointed ears, enchanted forest glowing behind him, ethereal soft light"},
		{category: "fantasy", slug: "cyberpunk_street", title: "Cyberpunk Street",
			female: "Cyberpunk portrait of the woman in the photo, iridescent bomber jacket, glowing circuit tattoos along her jaw, rain-soaked neon street market at night, magenta and cyan rim light, cinematic",
			male:   "Cyberpunk portrait of the man in the photo, armoured trench coat, glowing cybernetic eye implant, rain-soaked neon street market at night, magenta and cyan rim light, cinematic"},
		{category: "fantasy", slug: "astronaut", title: "Astronaut",
			female: "Portrait of the woman in the photo as an astronaut, white spacesuit with mission patches, helmet tucked under her arm, Earth rising over the lunar horizon behind her, crisp hard sunlight",
			male:   "Portrait of the man in the photo as an astronaut, white spacesuit with mission patches, helmet tucked under his arm, Earth rising over the lunar horizon behind him, crisp hard sunlight"},
	}},
	{feature: "image/generation", prefix: "gen", templates: []templateDef{
		{category: "photography", slug: "golden_hour_landscape", title: "Golden Hour Landscape",
			prompt: "Sweeping mountain valley at golden hour, low sun raking across wildflower meadows, mist pooling in the river bend, long shadows, shot on a full-frame camera with a 24mm lens, vivid but natural colour"},
		{category: "photography", slug: "street_photography", title: "Street Photography",
			prompt: "Candid street photograph in a busy old-town alley after rain, reflections on cobblestones, a cyclist blurred in motion, 35mm film look, high contrast, documentary style"},
		{category: "photography", slug: "macro_nature", title: "Macro Nature",
			prompt: "Extreme macro photograph of dew drops on a spider web at dawn, each drop refracting a tiny sunrise, creamy bokeh background, razor-thin depth of field"},
		{category: "illustration", slug: "childrens_book", title: "Children's Book",
			prompt: "Whimsical children's book illustration, soft gouache textures, rounded friendly shapes, gentle pastel palette, a cosy scene full of small hidden details to discover"},
		{category: "illustration", slug: "isometric_city", title: "Isometric City",
			prompt: "Isometric illustration of a tiny vibrant city block, clean vector shapes, rooftop gardens, little people and cars, bright flat colours, soft ambient shadows, white background"},
		{category: "illustration", slug: "vintage_travel_poster", title: "Vintage Travel Poster",
			prompt: "Vintage 1930s travel poster, bold art deco typography space at the top, limited screen-print palette, dramatic perspective, sunlit coastline with a steam liner on the horizon"},
		{category: "3d", slug: "clay_render", title: "Clay Render",
			prompt: "Playful 3D claymation render, soft matte plasticine materials with fingerprints, chunky proportions, warm studio lighting, pastel backdrop, tilt-shift depth of field"},
		{category: "3d", slug: "low_poly_diorama", title: "Low Poly Diorama",
			prompt: "Low poly 3D diorama floating on a small island of earth, faceted trees and rocks, a tiny cabin with smoke from the chimney, soft global illumination, gradient sky"},
	}},
	{feature: "image/product-shot", prefix: "product", templates: []templateDef{
		{category: "studio", slug: "white_packshot", title: "Pure White Packshot",
			prompt: "E-commerce packshot on a pure white seamless background, even softbox lighting, subtle contact shadow, crisp edges, true-to-life colour, centred composition"},
		{category: "studio", slug: "floating_shadow", title: "Floating With Shadow",
			prompt: "Product floating in mid-air above a pale grey surface, soft diffused drop shadow beneath, gentle gradient backdrop, minimal and premium"},
		{category: "studio", slug: "colored_paper_set", title: "Colored Paper Set",
			prompt: "Product on a set of curved coloured paper sweeps in coral and butter yellow, hard sunlight casting graphic shadows, playful modern catalogue style"},
		{category: "lifestyle", slug: "marble_kitchen", title: "Marble Kitchen Counter",
			prompt: "Product on a white marble kitchen counter, morning light through a window, fresh herbs and a linen towel softly out of focus, airy Scandinavian interior"},
		{category: "lifestyle", slug: "cozy_desk", title: "Cozy Desk Setup",
			prompt: "Product on a walnut desk beside a steaming mug and an open notebook, warm lamp light, houseplants in the background, cosy evening atmosphere"},
		{category: "lifestyle", slug: "outdoor_picnic", title: "Outdoor Picnic",
			prompt: "Product on a checked picnic blanket in a sunny park, dappled light through leaves, fresh fruit and a wicker basket nearby, relaxed summer mood"},
		{category: "seasonal", slug: "holiday_gift_table", title: "Holiday Gift Table",
			prompt: "Product among wrapped gifts and pine branches on a rustic wooden table, warm fairy-light bokeh, red and gold accents, festive winter evening"},
		{category: "seasonal", slug: "summer_beach", title: "Summer Beach",
			prompt: "Product resting on warm sand by the shoreline, turquoise water and gentle waves behind, bright midday sun, seashells and a striped towel nearby"},
	}},
	{feature: "image/youtube-thumbnail", prefix: "thumb", templates: []templateDef{
		{category: "gaming", slug: "epic_boss_fight", title: "Epic Boss Fight",
			prompt: "High-energy gaming thumbnail, a towering fiery boss monster looming over a tiny hero, explosive orange and purple lighting, bold empty space on the right for big text, extreme contrast"},
		{category: "gaming", slug: "clutch_moment", title: "Clutch Moment",
			prompt: "Gaming thumbnail of a last-second clutch victory, a shocked player face in the foreground, glowing red arrow pointing at a tiny health bar, saturated colours, dramatic rim light"},
		{category: "gaming", slug: "speedrun_record", title: "Speedrun Record",
			prompt: "Speedrun thumbnail with a giant glowing stopwatch, motion streaks and a triumphant character mid-jump, electric blue and yellow palette, clean space for a record time"},
		{category: "tutorial", slug: "before_after_split", title: "Before and After Split",
			prompt: "Tutorial thumbnail split down the middle, a dull grey before on the left and a vibrant finished after on the right, a bold arrow crossing the divide, clean and readable"},
		{category: "tutorial", slug: "step_by_step", title: "Step-by-Step Explainer",
			prompt: "Friendly explainer thumbnail with three numbered steps as bright rounded cards, a pointing presenter on the left, clean white background with a single accent colour"},
		{category: "tutorial", slug: "big_number_reveal", title: "Big Number Reveal",
			prompt: "Thumbnail built around one huge eye-catching number in bold 3D type, surprised face beside it, yellow background, thick black outline on every element"},
		{category: "vlog", slug: "travel_day", title: "Travel Day",
			prompt: "Travel vlog thumbnail, smiling traveller holding a passport in front of a stunning turquoise bay, warm sunny colours, subtle vignette, space at the top for a short title"},
		{category: "vlog", slug: "reaction_face", title: "Reaction Face",
			prompt: "Reaction vlog thumbnail, an exaggerated open-mouthed expression on the right, the thing being reacted to blurred and circled in red on the left, punchy saturated colours"},
	}},
	{feature: "image/ad", prefix: "ad", templates: []templateDef{
		{category: "social", slug: "story_flash_sale", title: "Story Flash Sale",
			prompt: "Vertical social story ad for a flash sale, product hero shot on a vivid gradient, oversized percentage badge, countdown-style urgency, clear call-to-action area at the bottom"},
		{category: "social", slug: "feed_launch_post", title: "Feed Launch Post",
			prompt: "Square feed ad announcing a new product launch, product centred on a clean pastel set, confetti accents, bold headline space above, premium yet playful"},
		{category: "social", slug: "ugc_testimonial", title: "UGC Style Testimonial",
			prompt: "Authentic user-generated style ad, the product held in hand in a real bathroom mirror selfie, natural lighting, a handwritten-style quote bubble with a five-star rating"},
		{category: "display", slug: "leaderboard_promo", title: "Leaderboard Promo",
			prompt: "Wide leaderboard banner ad, product on the left, short punchy offer in the middle, contrasting call-to-action button on the right, brand colours, legible at small size"},
		{category: "display", slug: "retargeting_reminder", title: "Retargeting Reminder",
			prompt: "Display retargeting ad reminding the viewer of the product they viewed, clean product cut-out, friendly still-thinking-about-it message space, soft brand-coloured background"},
		{category: "print", slug: "magazine_full_page", title: "Magazine Full Page",
			prompt: "Luxury full-page magazine ad, product photographed with dramatic side light on dark velvet, generous negative space, elegant serif headline area, refined and aspirational"},
		{category: "print", slug: "event_poster", title: "Event Poster",
			prompt: "Bold event poster ad, product integrated into a vibrant concert-style layout, halftone textures, large date and venue block, energetic diagonal composition"},
	}},
	{feature: "video/logo-reveal", prefix: "logo", templates: []templateDef{
		{category: "motion", slug: "neon_glow", title: "Neon Glow",
			prompt: "Neon tubes flicker to life on a dark rain-soaked brick wall, electric buzz and sparks, pink and cyan glow reflecting in puddles; moody, nocturnal, synthwave"},
		{category: "motion", slug: "particle_burst", title: "Particle Burst",
			prompt: "A swirl of glowing particles spirals in from the edges and bursts into a ring of light, lens flares and soft bloom on a deep navy backdrop; energetic, modern, premium"},
		{category: "motion", slug: "ink_spread", title: "Ink Spread",
			prompt: "Black ink blooms and spreads through still water in slow organic clouds, paper texture and gentle caustics in the background; artistic, calm, elegant"},
		{category: "motion", slug: "glass_shatter", title: "Glass Shatter",
			prompt: "A pane of glass shatters in slow motion, shards tumbling past the camera and catching hard rim light against a dark studio; dramatic, powerful, cinematic"},
		{category: "outro", slug: "dissolve_to_dust", title: "Dissolve to Dust",
			prompt: "The edges crumble into fine golden dust carried away by a gentle breeze across a warm sunset haze; wistful, calm, graceful ending"},
		{category: "outro", slug: "fade_into_light", title: "Fade into Light",
			prompt: "A soft white glow swells from behind, light rays spill outward and everything washes into a bright clean frame; hopeful, airy, serene"},
		{category: "outro", slug: "glitch_out", title: "Glitch Out",
			prompt: "Digital glitches tear through the frame, RGB channels split and scanlines roll before a hard cut to black; edgy, techy, abrupt"},
	}},
	{feature: "video/object-reveal", prefix: "object", templates: []templateDef{
		{category: "cinematic", slug: "smoke_curtain", title: "Smoke Curtain",
			prompt: "Thick theatrical smoke drifts aside like a curtain under a single overhead spotlight, slow dolly-in toward the object on a dark stage; mysterious, luxurious"},
		{category: "cinematic", slug: "spotlight_turntable", title: "Spotlight Turntable",
			prompt: "The object turns slowly on a polished black turntable while a spotlight sweeps across it and reflections glide over the surface; sleek, premium, showroom"},
		{category: "cinematic", slug: "liquid_splash", title: "Liquid Splash",
			prompt: "A crown of crystal-clear water splashes up in slow motion and falls away to unveil the object, droplets sparkling in backlight; fresh, crisp, refreshing"},
		{category: "playful", slug: "confetti_pop", title: "Confetti Pop",
			prompt: "A burst of colourful confetti and streamers pops open and rains down around the object on a bright pastel set, quick bouncy camera push; joyful, celebratory"},
		{category: "playful", slug: "paper_unfold", title: "Paper Unfold",
			prompt: "Origami paper panels fold open one by one like a gift box to uncover the object, soft daylight on a craft-paper table; charming, handmade, cheerful"},
		{category: "playful", slug: "bubble_float", title: "Bubble Float",
			prompt: "Iridescent soap bubbles drift upward and one large bubble pops to leave the object floating in mid-air against a sky-blue gradient; light, dreamy, whimsical"},
	}},
	{feature: "video/avatar", prefix: "avatar", templates: []templateDef{
		{category: "presenter", slug: "news_desk", title: "News Desk",
			female: "A poised female news anchor in a tailored blazer seated at a glossy modern news desk, city skyline on the studio screens behind her, broadcast lighting, steady medium shot",
			male:   "A poised male news anchor in a dark suit and tie seated at a glossy modern news desk, city skyline on the studio screens behind him, broadcast lighting, steady medium shot"},
		{category: "presenter", slug: "keynote_stage", title: "Keynote Stage",
			female: "A confident woman presenting on a keynote stage with a headset microphone, giant soft-glow screen behind her, audience silhouettes in the foreground, warm stage lighting",
			male:   "A confident man presenting on a keynote stage with a headset microphone, giant soft-glow screen behind him, audience silhouettes in the foreground, warm stage lighting"},
		{category: "presenter", slug: "corporate_update", title: "Corporate Update",
			female: "A friendly female executive standing in a bright glass-walled office, smart-casual blouse, plants and whiteboards softly blurred behind her, eye-level framing",
			male:   "A friendly male executive standing in a bright glass-walled office, smart-casual shirt and blazer, plants and whiteboards softly blurred behind him, eye-level framing"},
		{category: "social", slug: "selfie_vlog", title: "Selfie Vlog",
			female: "A young woman filming a handheld selfie vlog on a sunny city street, casual denim jacket, natural daylight, slight handheld movement, upbeat and personal",
			male:   "A young man filming a handheld selfie vlog on a sunny city street, casual hoodie, natural daylight, slight handheld movement, upbeat and personal"},
		{category: "social", slug: "podcast_studio", title: "Podcast Studio",
			female: "A woman speaking into a broadcast microphone on a boom arm in a cosy podcast studio, acoustic panels and warm Edison bulbs behind her, relaxed conversational framing",
			male:   "A man speaking into a broadcast microphone on a boom arm in a cosy podcast studio, acoustic panels and warm Edison bulbs behind him, relaxed conversational framing"},
		{category: "education", slug: "whiteboard_teacher", title: "Whiteboard Teacher",
			female: "A cheerful female teacher standing beside a whiteboard covered in simple diagrams, bright classroom light, gesturing toward the board, clear front-facing shot",
			male:   "A cheerful male teacher standing beside a whiteboard covered in simple diagrams, bright classroom light, gesturing toward the board, clear front-facing shot"},
		{category: "education", slug: "home_office_coach", title: "Home Office Coach",
			female: "A warm female coach talking to camera from a tidy home office, bookshelves and a window with soft daylight behind her, relaxed knit sweater, webinar framing",
			male:   "A warm male coach talking to camera from a tidy home office, bookshelves and a window with soft daylight behind him, relaxed knit sweater, webinar framing"},
	}},
	{feature: "audio/voiceover", prefix: "voiceover", templates: []templateDef{
		{category: "commercial", slug: "upbeat_retail", title: "Upbeat Retail Spot",
			prompt: "Energetic, smiling delivery with a brisk pace, punch the offer and the brand name, lift the energy on the call to action"},
		{category: "commercial", slug: "luxury_whisper", title: "Luxury Brand Whisper",
			prompt: "Intimate, breathy and unhurried, close to the microphone, let each phrase linger with a sense of quiet luxury"},
		{category: "commercial", slug: "radio_promo", title: "Radio Promo",
			prompt: "Big, confident radio announcer delivery, rhythmic and punchy, dramatic pause before the date and place"},
		{category: "narration", slug: "documentary", title: "Documentary",
			prompt: "Measured, authoritative documentary narration with a calm sense of wonder, clear articulation, natural pauses between ideas"},
		{category: "narration", slug: "audiobook_chapter", title: "Audiobook Chapter",
			prompt: "Warm, expressive audiobook reading, gentle pace, subtle shifts of tone for dialogue, draw the listener into the story"},
		{category: "narration", slug: "meditation_guide", title: "Meditation Guide",
			prompt: "Soft, slow and soothing, long relaxed pauses, low steady pitch, as if guiding someone to breathe deeply"},
		{category: "explainer", slug: "product_walkthrough", title: "Product Walkthrough",
			prompt: "Friendly, clear and helpful, medium pace, emphasise each step and feature name, sound like a knowledgeable colleague"},
		{category: "explainer", slug: "elearning_module", title: "E-learning Module",
			prompt: "Patient and encouraging teacher voice, even pace, stress the key terms and pause after each learning point"},
	}},
}
