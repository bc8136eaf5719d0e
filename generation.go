package mediagen

import "cmp"

// Terminal reports whether a generation in status s will change no more:
// done, error or timeout.
func (s GenerationStatus) Terminal() bool {
	return s == GenerationStatusDone || s == GenerationStatusError || s == GenerationStatusTimeout
}

// Failed reports whether s is error or timeout, the statuses whose charge
// is refunded.
func (s GenerationStatus) Failed() bool {
	return s == GenerationStatusError || s == GenerationStatusTimeout
}

// Terminal reports whether the generation will change no more.
func (g *Generation) Terminal() bool { return g.Status.Terminal() }

// URL returns the signed URL of the image, video or audio asset; "" for
// text (the output is Text) and before the generation is done.
func (o Output) URL() string { return cmp.Or(o.Image, o.Video, o.Audio) }
