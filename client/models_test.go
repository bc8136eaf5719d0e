package client_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mediagen/mediagen-go/client"
)

func TestIsTerminal(t *testing.T) {
	for status, want := range map[client.GenerationStatus]bool{
		client.StatusPending: false, client.StatusRunning: false,
		client.StatusDone: true, client.StatusError: true, client.StatusTimeout: true,
	} {
		assert.Equal(t, want, client.IsTerminal(status), status)
	}
	assert.False(t, client.IsVoiceTerminal(client.VoiceTraining))
	assert.True(t, client.IsVoiceTerminal(client.VoiceDone))
	assert.True(t, client.IsVoiceTerminal(client.VoiceError))
}
