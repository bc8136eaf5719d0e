package webhook_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/webhook"
)

// signed returns headers signing payload with secret at at.
func signed(secret string, at time.Time, payload []byte) http.Header {
	h := http.Header{}
	webhook.SetHeaders(h, []string{secret}, at, payload)
	return h
}

func TestParseGenerationEvent(t *testing.T) {
	v := readVectors(t)["generation-new"]

	ev, err := webhook.Parse(v.payload, headerOf(v.timestamp, v.entry()), v.secret, clock(v.at()))
	require.NoError(t, err)

	assert.Equal(t, webhook.EventGenerationDone, ev.Name)
	require.NotNil(t, ev.Generation)
	assert.Nil(t, ev.Voice)
	var g *mediagen.Generation = ev.Generation
	assert.Equal(t, "gen_01HZX4T9Q2", g.ID)
	assert.Equal(t, "done", string(g.Status))
	assert.Equal(t, "image/generation", string(g.Feature))
	assert.InDelta(t, 0.04, g.BalanceUsed, 1e-9)
	require.NotZero(t, g.Output)
	require.NotZero(t, g.ExpiresAt)
	assert.Equal(t, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), g.ExpiresAt.UTC())
	assert.Equal(t, `a lighthouse at dusk, "cinematic"`, g.Params["prompt"])
	assert.Equal(t, v.payload, []byte(ev.Raw))
}

func TestParseVoiceEvent(t *testing.T) {
	v := readVectors(t)["voice"]

	ev, err := webhook.Parse(v.payload, headerOf(v.timestamp, v.entry()), v.secret, clock(v.at()))
	require.NoError(t, err)

	assert.Equal(t, webhook.EventVoiceDone, ev.Name)
	assert.Nil(t, ev.Generation)
	require.NotNil(t, ev.Voice)
	var voice *mediagen.Voice = ev.Voice
	assert.Equal(t, "voc_5k2m", voice.ID)
	assert.Equal(t, "Narrator", voice.Name)
	require.NotZero(t, voice.Status)
	assert.Equal(t, "done", string(voice.Status))
}

func TestParseKeepsUnknownEvents(t *testing.T) {
	at := time.Unix(1763719200, 0)
	tests := []struct {
		name       string
		body       string
		want       webhook.EventName
		generation string
		voice      string
	}{
		{name: "future generation event", body: `{"event":"generation.started","generation":{"id":"gen_9","status":"running","requestDate":"2026-11-21T10:00:00Z"}}`, want: "generation.started", generation: "gen_9"},
		{name: "future voice event", body: `{"event":"voice.deleted","voice":{"id":"voc_9","name":"n","owner":"project"}}`, want: "voice.deleted", voice: "voc_9"},
		{name: "event of another resource", body: `{"event":"project.updated","project":{"id":"prj_1"}}`, want: "project.updated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := []byte(tt.body)
			ev, err := webhook.Parse(payload, signed("s", at, payload), "s", clock(at))
			require.NoError(t, err)
			assert.Equal(t, tt.want, ev.Name)
			assert.False(t, ev.Name.Known())
			assert.JSONEq(t, tt.body, string(ev.Raw))
			if tt.generation != "" {
				require.NotNil(t, ev.Generation)
				assert.Equal(t, tt.generation, ev.Generation.ID)
			} else {
				assert.Nil(t, ev.Generation)
			}
			if tt.voice != "" {
				require.NotNil(t, ev.Voice)
				assert.Equal(t, tt.voice, ev.Voice.ID)
			} else {
				assert.Nil(t, ev.Voice)
			}
		})
	}
}

func TestParseRejectsSignedNonEvents(t *testing.T) {
	at := time.Unix(1763719200, 0)
	for name, body := range map[string]string{
		"not JSON":                      `event=generation.done`,
		"empty":                         ``,
		"null":                          `null`,
		"array":                         `[{"event":"generation.done"}]`,
		"no event name":                 `{"generation":{"id":"gen_1"}}`,
		"event name not a string":       `{"event":7}`,
		"generation missing":            `{"event":"generation.done"}`,
		"generation without id":         `{"event":"generation.error","generation":{"status":"error"}}`,
		"voice event with a generation": `{"event":"voice.done","generation":{"id":"gen_1"}}`,
		"voice without id":              `{"event":"voice.error","voice":{"name":"x"}}`,
		"malformed date":                `{"event":"generation.done","generation":{"id":"gen_1","requestDate":"yesterday"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			payload := []byte(body)
			ev, err := webhook.Parse(payload, signed("s", at, payload), "s", clock(at))
			require.ErrorIs(t, err, webhook.ErrInvalidPayload)
			assert.Nil(t, ev)
		})
	}
}

func TestParseVerifiesFirst(t *testing.T) {
	v := readVectors(t)["generation-new"]

	ev, err := webhook.Parse(v.payload, headerOf(v.timestamp, v.entry()), "whsec_wrong", clock(v.at()))
	require.ErrorIs(t, err, webhook.ErrNoValidSignature)
	assert.Nil(t, ev)

	ev, err = webhook.Parse(v.payload, headerOf(v.timestamp, v.entry()), v.secret, clock(v.at().Add(time.Hour)))
	require.ErrorIs(t, err, webhook.ErrTimestampTooOld)
	assert.Nil(t, ev)

	// A body that is not an event is still refused as unsigned before it is decoded.
	ev, err = webhook.Parse([]byte("{"), headerOf(v.timestamp, v.entry()), v.secret, clock(v.at()))
	require.ErrorIs(t, err, webhook.ErrNoValidSignature)
	assert.Nil(t, ev)
}

func TestEventNameKnown(t *testing.T) {
	for _, n := range []webhook.EventName{
		webhook.EventGenerationDone, webhook.EventGenerationError, webhook.EventGenerationTimeout,
		webhook.EventVoiceDone, webhook.EventVoiceError,
	} {
		assert.True(t, n.Known(), n)
	}
	assert.Equal(t, webhook.EventName("generation.timeout"), webhook.EventGenerationTimeout)
	assert.Equal(t, webhook.EventName("voice.error"), webhook.EventVoiceError)
	for _, n := range []webhook.EventName{"", "generation.started", "Generation.Done", "voice.done "} {
		assert.False(t, n.Known(), n)
	}
}
