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
	// EventGenerationDone: download the output now, as it expires with the generation.
	EventGenerationDone EventName = "generation.done"
	// EventGenerationError: the generation failed; its charge was refunded.
	EventGenerationError EventName = "generation.error"
	// EventGenerationTimeout: the generation timed out; its charge was refunded.
	EventGenerationTimeout EventName = "generation.timeout"
	// EventVoiceDone: a cloned voice finished training.
	EventVoiceDone EventName = "voice.done"
	// EventVoiceError: cloning a voice failed or timed out; it was refunded.
	EventVoiceError EventName = "voice.error"
)

// Known reports whether n is one of the events this package declares.
func (n EventName) Known() bool {
	return n.generation() || n == EventVoiceDone || n == EventVoiceError
}

func (n EventName) generation() bool {
	return n == EventGenerationDone || n == EventGenerationError || n == EventGenerationTimeout
}

// Event is a verified webhook delivery. Exactly one of Generation and Voice
// is set for the known events; an unknown event keeps whichever its body has.
type Event struct {
	// Name is the event name as sent.
	Name EventName
	// Generation is set for generation events: the same as a GET of it.
	Generation *mediagen.Generation
	// Voice is set for voice events: the same as a GET of it.
	Voice *mediagen.Voice
	// Raw is the verified body; Parse shares it with the payload passed in.
	Raw json.RawMessage
}

// Parse verifies payload as Verify does, then decodes it into an Event. A
// signed body that is not an event gives an error wrapping ErrInvalidPayload;
// an unknown event name does not, so check Name before using Generation or Voice.
func Parse(payload []byte, header http.Header, secret string, opts ...Option) (*Event, error) {
	if err := Verify(payload, header, secret, opts...); err != nil {
		return nil, err
	}
	return decodeEvent(payload)
}

// decodeEvent checks only what a receiver depends on, so that fields the
// service adds later do not break it.
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
	switch {
	case ev.Name == "":
		return nil, fmt.Errorf("%w: no event name", ErrInvalidPayload)
	case ev.Name.generation() && (ev.Generation == nil || ev.Generation.ID == ""):
		return nil, fmt.Errorf("%w: %s without a generation id", ErrInvalidPayload, ev.Name)
	case (ev.Name == EventVoiceDone || ev.Name == EventVoiceError) && (ev.Voice == nil || ev.Voice.ID == ""):
		return nil, fmt.Errorf("%w: %s without a voice id", ErrInvalidPayload, ev.Name)
	}
	return ev, nil
}

// dedupeKey names the delivery for the Store, "" when the body names neither
// a generation nor a voice. The name is in it so that a later event of the
// same generation is not a repeat.
func (e *Event) dedupeKey() string {
	switch {
	case e.Generation != nil && e.Generation.ID != "":
		return string(e.Name) + " generation " + e.Generation.ID
	case e.Voice != nil && e.Voice.ID != "":
		return string(e.Name) + " voice " + e.Voice.ID
	}
	return ""
}
