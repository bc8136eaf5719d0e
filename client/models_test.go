package client_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mediagen/mediagen-go/client"
)

func TestTerminal(t *testing.T) {
	for status, want := range map[client.GenerationStatus]bool{
		client.StatusPending: false, client.StatusRunning: false,
		client.StatusDone: true, client.StatusError: true, client.StatusTimeout: true,
	} {
		assert.Equal(t, want, status.Terminal(), status)
		g := client.Generation{Status: status}
		assert.Equal(t, want, g.Terminal(), status)
	}
	assert.False(t, client.VoiceTraining.Terminal())
	assert.True(t, client.VoiceDone.Terminal())
	assert.True(t, client.VoiceError.Terminal())
}
