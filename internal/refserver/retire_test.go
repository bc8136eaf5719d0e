package refserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/refserver/catalog"
)

func TestRetireVoiceAnswers404Everywhere(t *testing.T) {
	s := New()
	t.Cleanup(s.Close)
	v := catalog.Voices()[0]
	before := len(s.catalogVoices())

	require.True(t, s.RetireVoice(v.Slug), "retired by slug")
	_, ok := s.lookupVoice(v.ID)
	assert.False(t, ok, "the id stops resolving")
	_, ok = s.lookupVoice(v.Slug)
	assert.False(t, ok, "the slug stops resolving")
	assert.Len(t, s.catalogVoices(), before-1, "dropped from the list")
	assert.False(t, s.RetireVoice(v.ID), "retiring twice finds nothing live")
	assert.False(t, s.RetireVoice("no-such-voice"))

	other := New()
	t.Cleanup(other.Close)
	_, ok = other.lookupVoice(v.ID)
	assert.True(t, ok, "retirement belongs to one server")
}
