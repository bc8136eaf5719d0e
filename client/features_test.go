package client_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/feature"
)

func TestFeatureConstants(t *testing.T) {
	constants := []mediagen.Feature{
		mediagen.FeatureImageSelfPortrait, mediagen.FeatureImageGeneration, mediagen.FeatureImageProductShot,
		mediagen.FeatureImageYoutubeThumbnail, mediagen.FeatureImageAd, mediagen.FeatureVideoLogoReveal,
		mediagen.FeatureVideoObjectReveal, mediagen.FeatureVideoAvatar, mediagen.FeatureAudioVoiceover,
	}
	assert.Equal(t, constants, client.Features(), "in the order of the interface document")
	for _, f := range feature.All {
		assert.Equal(t, mediagen.Kind(f.Kind), client.KindOf(mediagen.Feature(f.Name)), f.Name)
		assert.Equal(t, mediagen.Kind(f.Kind), client.KindOf(mediagen.Feature(f.Legacy)), f.Legacy)
	}
	assert.Equal(t, mediagen.KindVideo, client.KindOf(mediagen.FeatureVideoAvatar))
	assert.Equal(t, mediagen.KindAudio, client.KindOf("voiceover"))
	assert.Empty(t, client.KindOf("video/unknown"))
	assert.Equal(t, feature.VoiceClone, string(mediagen.FeatureVoiceClone))
}

func TestLegacySpellingsBothWays(t *testing.T) {
	for _, tc := range []struct{ canonical, legacy mediagen.Feature }{
		{mediagen.FeatureImageGeneration, "image-generation"},
		{mediagen.FeatureVideoLogoReveal, "logo-reveal"},
		{mediagen.FeatureVideoAvatar, "avatar-video"},
		{mediagen.FeatureImageSelfPortrait, "self-portrait"},
		{mediagen.FeatureAudioVoiceover, "voiceover"},
	} {
		assert.Equal(t, tc.canonical, client.CanonicalFeature(tc.legacy))
		assert.Equal(t, tc.canonical, client.CanonicalFeature(tc.canonical))
		assert.Equal(t, tc.legacy, client.LegacyFeature(tc.canonical))
		assert.Equal(t, tc.legacy, client.LegacyFeature(tc.legacy))
	}
	for _, f := range feature.All {
		assert.Equal(t, mediagen.Feature(f.Name), client.CanonicalFeature(client.LegacyFeature(mediagen.Feature(f.Name))))
	}
	assert.Empty(t, client.CanonicalFeature("Logo-Reveal"), "matching is exact")
	assert.Empty(t, client.LegacyFeature("image/unknown"))
}
