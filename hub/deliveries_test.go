package hub

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/webhook"
)

// TestTraceInEvent: the trace context a hub adds to a shared event's body
// is valid JSON and comes out again, leaving the body byte for byte; a
// body without one is left alone.
func TestTraceInEvent(t *testing.T) {
	raw := json.RawMessage(`{"event":"generation.done","generation":{"id":"gen_1","status":"done"}}`)
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	ev := &webhook.Event{Name: webhook.EventGenerationDone, Raw: raw}

	traced := withTrace(ev, tp)
	assert.True(t, json.Valid(traced.Raw), "%s", traced.Raw)
	assert.Equal(t, raw, ev.Raw, "the event given is not changed")
	got, body := splitTrace(traced.Raw)
	assert.Equal(t, tp, got)
	assert.Equal(t, []byte(raw), body)

	require.Same(t, ev, withTrace(ev, ""), "no span, nothing added")
	got, body = splitTrace(raw)
	assert.Empty(t, got)
	assert.Equal(t, []byte(raw), body)
}
