package client

import "github.com/mediagen/mediagen-go/internal/api/model"

// Generation is an asynchronous job that produces one asset. Feature is
// echoed as submitted (canonical or legacy spelling); Output is set once
// Status is [StatusDone]; BalanceUsed is what was charged, refunded when the
// generation ends in [StatusError] or [StatusTimeout]. API-created
// generations disappear at ExpiresAt, 24 hours after the request.
type Generation = model.Generation

// Output is the finished asset of a generation: exactly one of Image, Video,
// Audio or Text is set, by kind. URLs are signed and expire with the
// generation, so download what you keep.
type Output = model.Output

// GenerationStatus is the lifecycle state of a generation.
type GenerationStatus = model.GenerationStatus

// The states of a generation. Done, Error and Timeout are terminal; Error
// and Timeout are refunded.
const (
	StatusPending GenerationStatus = "pending"
	StatusRunning GenerationStatus = "running"
	StatusDone    GenerationStatus = "done"
	StatusError   GenerationStatus = "error"
	StatusTimeout GenerationStatus = "timeout"
)

// IsTerminal reports whether a generation in status will change no more.
func IsTerminal(status GenerationStatus) bool {
	return status == StatusDone || status == StatusError || status == StatusTimeout
}

// Kind is the kind of asset a feature produces.
type Kind = model.Kind

// The kinds of asset.
const (
	KindImage Kind = "image"
	KindVideo Kind = "video"
	KindAudio Kind = "audio"
	KindText  Kind = "text"
)

// File is an uploaded reference file; pass its Id in a feature's arguments.
// Files are deleted 24 hours after they land.
type File = model.File

// UploadURL is a reserved signed upload: PUT the bytes to UploadUrl with
// exactly Headers and no Authorization header, before ExpiresIn seconds pass.
type UploadURL = model.UploadURL

// UploadHeaders are the headers the storage PUT of an [UploadURL] must carry
// exactly; storage refuses a PUT that changes or omits either with 403.
type UploadHeaders = model.UploadHeaders

// Voice is a catalog voice (Owner [VoiceOwnerService]) or one of the
// project's clones (Owner [VoiceOwnerProject]). Its Id, or a catalog voice's
// Slug, goes in the voiceId argument.
type Voice = model.Voice

// VoiceOwner says whose a voice is.
type VoiceOwner = model.VoiceOwner

// The owners of voices.
const (
	VoiceOwnerService VoiceOwner = "service" // the catalog, the same for every caller
	VoiceOwnerProject VoiceOwner = "project" // the project's own clones
)

// VoiceStatus is the training state of a clone; catalog voices have none.
type VoiceStatus = model.VoiceStatus

// The training states of a clone.
const (
	VoiceTraining VoiceStatus = "running" // training; the wire value is "running"
	VoiceDone     VoiceStatus = "done"
	VoiceError    VoiceStatus = "error" // training failed or timed out; refunded
)

// IsVoiceTerminal reports whether a clone in status will change no more.
func IsVoiceTerminal(status VoiceStatus) bool {
	return status == VoiceDone || status == VoiceError
}

// Template is a ready-made style for one feature; resolve one of its
// Previews to a prompt with [Client.TemplatePrompt].
type Template = model.Template

// TemplatePreviewRef is one preview of a [Template]; its image and video URLs
// expire after about 6 hours.
type TemplatePreviewRef = model.TemplatePreviewRef

// TemplatePreview is a template preview resolved to its prompt: send Prompt
// as the prompt argument.
type TemplatePreview = model.TemplatePreview

// PricingEntry is the price of one feature: Price USD per Unit, times the
// multiplier Variants gives each priced argument. See [Pricing.Estimate].
type PricingEntry = model.PricingEntry

// PricingUnit is what a price is charged per.
type PricingUnit = model.PricingEntryUnit

// The pricing units.
const (
	UnitCall      PricingUnit = "call"      // per call
	UnitSecond    PricingUnit = "second"    // per second of finished clip
	Unit15s       PricingUnit = "15s"       // per started 15 seconds of clip
	Unit1000Chars PricingUnit = "1000chars" // per started 1,000 characters of script
)
