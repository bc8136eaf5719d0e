package model

// Hand-written methods on the generated types: the names users call on the
// values they hold. The generator writes model.gen.go; this file is ours.

// Terminal reports whether a generation in status s will change no more:
// done, error or timeout.
func (s GenerationStatus) Terminal() bool {
	return s == GenerationStatusDone || s == GenerationStatusError || s == GenerationStatusTimeout
}

// Failed reports whether s is error or timeout, the statuses that are
// refunded.
func (s GenerationStatus) Failed() bool {
	return s == GenerationStatusError || s == GenerationStatusTimeout
}

// Terminal reports whether the generation will change no more.
func (g *Generation) Terminal() bool { return g.Status.Terminal() }

// URL returns the signed URL of the asset: the image, video or audio,
// whichever the generation's kind produced; "" for text, whose output is
// Text itself, and before the generation is done.
func (o Output) URL() string {
	switch {
	case o.Image != "":
		return o.Image
	case o.Video != "":
		return o.Video
	default:
		return o.Audio
	}
}

// Terminal reports whether a clone in status s will change no more: done or
// error. A catalog voice has no status and is always terminal.
func (s VoiceStatus) Terminal() bool {
	return s == "" || s == VoiceStatusDone || s == VoiceStatusError
}

// Terminal reports whether the voice will change no more: a catalog voice,
// or a clone that finished training.
func (v *Voice) Terminal() bool { return v.Status.Terminal() }

// IsFavorite reports whether the project starred the voice; false for
// clones, which cannot be starred (their Favorite is nil).
func (v *Voice) IsFavorite() bool { return v.Favorite != nil && *v.Favorite }
