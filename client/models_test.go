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

func TestFailed(t *testing.T) {
	for status, want := range map[client.GenerationStatus]bool{
		client.StatusPending: false, client.StatusRunning: false, client.StatusDone: false,
		client.StatusError: true, client.StatusTimeout: true,
	} {
		assert.Equal(t, want, status.Failed(), status)
	}
}

func TestOutputURL(t *testing.T) {
	for _, tc := range []struct {
		out  client.Output
		want string
	}{
		{client.Output{Image: "https://s/i.png", Mime: "image/png"}, "https://s/i.png"},
		{client.Output{Video: "https://s/v.mp4", Poster: "https://s/p.png", Mime: "video/mp4"}, "https://s/v.mp4"},
		{client.Output{Audio: "https://s/a.wav", Mime: "audio/wav"}, "https://s/a.wav"},
		{client.Output{Text: "hello", Mime: "text/plain"}, ""},
		{client.Output{}, ""},
	} {
		assert.Equal(t, tc.want, tc.out.URL(), tc.out.Mime)
	}
	var pending client.Generation
	assert.Empty(t, pending.Output.URL(), "no nil check before the output exists")
}
