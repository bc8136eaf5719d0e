package webhook

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mediagen/mediagen-go"
)

// EventName is the name of a webhook event, such as EventGenerationDone.
type EventName string

// The events the service sends, once per generation or voice.
const (
	// EventGenerationDone is sent when a generation finished; download its
	// output now, as it expires with the generation.
	EventGenerationDone EventName = "generation.done"
	// EventGenerationError is sent when a generation failed; its charge was refunded.
	EventGenerationError EventName = "generation.error"
	// EventGenerationTimeout is sent when a generation timed out; its charge was refunded.
	EventGenerationTimeout EventName = "generation.timeout"
	// EventVoiceDone is sent when a cloned voice finished training.
	EventVoiceDone EventName = "voice.done"
	// EventVoiceError is sent when cloning a voice failed or timed out; it was refunded.
	EventVoiceError EventName = "voice.error"
)

// Known reports whether n is one of the events this package declares.
func (n EventName) Known() bool {
	switch n {
	case EventGenerationDone, EventGenerationError, EventGenerationTimeout, EventVoiceDone, EventVoiceError:
		return true
	}
	return false
}

// Event is a verified webhook delivery. Exactly one of Generation and Voice
// is set for the known events; an event of a name this package does not
// know is still returned, with whichever of the two its body carries, and
// Raw for anything else.
type Event struct {
	// Name is the event name as sent.
	Name EventName
	// Generation is set for generation events: the same as a GET of it.
	Generation *mediagen.Generation
	// Voice is set for voice events: the same as a GET of it.
	Voice *mediagen.Voice
	// Raw is the verified body. Parse does not copy it: it shares memory
	// with the payload passed in.
	Raw json.RawMessage
}

// Parse verifies payload as Verify does, then decodes it into an Event.
// A correctly signed body that is not an event gives an error wrapping
// ErrInvalidPayload. Event names this package does not know are not an
// error: check Name before using Generation or Voice.
func Parse(payload []byte, header http.Header, secret string, opts ...Option) (*Event, error) {
	if err := Verify(payload, header, secret, opts...); err != nil {
		return nil, err
	}
	return decodeEvent(payload)
}

// decodeEvent decodes a verified body. Only what the receiver depends on is
// checked, so fields the service adds later do not break it.
func decodeEvent(payload []byte) (*Event, error) {
	var body struct {
		Event      EventName            `json:"event"`
		Generation *mediagen.Generation `json:"generation"`
		Voice      *mediagen.Voice      `json:"voice"`
	}
	if err := json.Unmarshal(payload, &body); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPayload, err)
	}
	ev := &Event{Name: body.Event, Generation: body.Generation, Voice: body.Voice, Raw: payload}
	switch ev.Name {
	case "":
		return nil, fmt.Errorf("%w: no event name", ErrInvalidPayload)
	case EventGenerationDone, EventGenerationError, EventGenerationTimeout:
		if ev.Generation == nil || ev.Generation.ID == "" {
			return nil, fmt.Errorf("%w: %s without a generation id", ErrInvalidPayload, ev.Name)
		}
	case EventVoiceDone, EventVoiceError:
		if ev.Voice == nil || ev.Voice.ID == "" {
			return nil, fmt.Errorf("%w: %s without a voice id", ErrInvalidPayload, ev.Name)
		}
	}
	return ev, nil
}

// dedupeKey names the delivery for the duplicate store: the event name and
// the generation or voice id. The name is part of it so an event added later
// for the same generation is not taken for a repeat. It is empty when the
// body names neither.
func (e *Event) dedupeKey() string {
	switch {
	case e.Generation != nil && e.Generation.ID != "":
		return string(e.Name) + " generation " + e.Generation.ID
	case e.Voice != nil && e.Voice.ID != "":
		return string(e.Name) + " voice " + e.Voice.ID
	}
	return ""
}
