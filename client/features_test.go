package client_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/feature"
)

func TestFeatureConstants(t *testing.T) {
	constants := []string{
		client.FeatureSelfPortrait, client.FeatureImageGeneration, client.FeatureProductShot,
		client.FeatureYoutubeThumbnail, client.FeatureAd, client.FeatureLogoReveal,
		client.FeatureObjectReveal, client.FeatureAvatar, client.FeatureVoiceover,
	}
	assert.Equal(t, constants, client.Features(), "in the order of the interface document")
	for _, f := range feature.All {
		assert.Equal(t, client.Kind(f.Kind), client.KindOf(f.Name), f.Name)
		assert.Equal(t, client.Kind(f.Kind), client.KindOf(f.Legacy), f.Legacy)
	}
	assert.Equal(t, client.KindVideo, client.KindOf(client.FeatureAvatar))
	assert.Equal(t, client.KindAudio, client.KindOf("voiceover"))
	assert.Empty(t, client.KindOf("video/unknown"))
	assert.Equal(t, feature.VoiceClone, client.FeatureVoiceClone)
}

func TestLegacySpellingsBothWays(t *testing.T) {
	for _, tc := range []struct{ canonical, legacy string }{
		{client.FeatureImageGeneration, "image-generation"},
		{client.FeatureLogoReveal, "logo-reveal"},
		{client.FeatureAvatar, "avatar-video"},
		{client.FeatureSelfPortrait, "self-portrait"},
		{client.FeatureVoiceover, "voiceover"},
	} {
		assert.Equal(t, tc.canonical, client.CanonicalFeature(tc.legacy))
		assert.Equal(t, tc.canonical, client.CanonicalFeature(tc.canonical))
		assert.Equal(t, tc.legacy, client.LegacyFeature(tc.canonical))
		assert.Equal(t, tc.legacy, client.LegacyFeature(tc.legacy))
	}
	for _, f := range feature.All {
		assert.Equal(t, f.Name, client.CanonicalFeature(client.LegacyFeature(f.Name)))
	}
	assert.Empty(t, client.CanonicalFeature("Logo-Reveal"), "matching is exact")
	assert.Empty(t, client.LegacyFeature("image/unknown"))
}
