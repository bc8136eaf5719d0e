package mediagen

import "encoding/json"

// Terminal reports whether a clone in status s will change no more: done or
// error. A catalog voice has no status and is always terminal.
func (s VoiceStatus) Terminal() bool {
	return s == "" || s == VoiceStatusDone || s == VoiceStatusError
}

// Terminal reports whether the voice will change no more: a catalog voice,
// or a clone that finished training.
func (v *Voice) Terminal() bool { return v.Status.Terminal() }

// MarshalJSON encodes the voice as the service sends it: favorite always
// on a catalog voice, false included, and never on a clone.
func (v Voice) MarshalJSON() ([]byte, error) {
	type fields Voice // the same fields without this method
	if v.Owner != VoiceOwnerService {
		return json.Marshal(fields(v))
	}
	return json.Marshal(struct {
		fields
		Favorite bool `json:"favorite"` // shadows the embedded omitzero field
	}{fields(v), v.Favorite})
}
