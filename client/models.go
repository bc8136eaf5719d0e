package client

import "github.com/mediagen/mediagen-go/internal/api/model"

// The types below are the service's resources, generated from the contract
// with Go names and value fields: an absent optional field is its zero
// value, so no field needs a nil check. They are the same types webhook
// events carry.

// Generation is an asynchronous job that produces one asset: ID, ProjectID,
// Feature (echoed as submitted, canonical or legacy spelling), Kind,
// Status, Title, Params (the submitted args), Output (set once Status is
// [StatusDone]), Error (why it failed), BalanceUsed (what was charged,
// refunded when it ends in [StatusError] or [StatusTimeout]), RequestDate,
// ResponseDate (once finished) and ExpiresAt: API-created generations and
// their assets disappear then, 24 hours after the request.
// [Generation.Terminal] reports whether it will change no more.
type Generation = model.Generation

// Output is the finished asset of a generation: Image, Video or Audio (a
// signed URL, by kind; [Output.URL] returns whichever is set) or Text, and
// Mime, its media type. A video also has Poster (URL of a still), DurationMs,
// Width and Height. URLs expire with the generation: download what you keep
// ([Client.SaveOutput]).
type Output = model.Output

// GenerationStatus is the lifecycle state of a generation;
// [GenerationStatus.Terminal] and [GenerationStatus.Failed] classify it.
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

// Kind is the kind of asset a feature produces.
type Kind = model.Kind

// The kinds of asset.
const (
	KindImage Kind = "image"
	KindVideo Kind = "video"
	KindAudio Kind = "audio"
	KindText  Kind = "text"
)

// File is an uploaded reference file: pass its ID in a feature's arguments.
// OriginalName and Size are set by the multipart route; the signed route
// sets Size. Files are deleted 24 hours after they land.
type File = model.File

// UploadURL is a reserved signed upload ([Client.CreateUploadURL]): PUT the
// bytes to UploadURL with exactly Headers and no Authorization header,
// before ExpiresIn seconds pass; File.ID is then live.
type UploadURL = model.UploadURL

// UploadHeaders are the headers the storage PUT of an [UploadURL] must carry
// exactly (ContentType, ContentLength); storage refuses a PUT that changes
// or omits either with 403.
type UploadHeaders = model.UploadHeaders

// Voice is a catalog voice (Owner [VoiceOwnerService]) or one of the
// project's clones (Owner [VoiceOwnerProject]). Its ID, or a catalog voice's
// Slug, goes in the voiceId argument. Catalog voices carry Slug, Tags,
// Locale, Favorite and Preview (an audition URL valid about 6 hours);
// clones carry Status, Error, RequestDate and ResponseDate.
type Voice = model.Voice

// VoiceOwner says whose a voice is.
type VoiceOwner = model.VoiceOwner

// The owners of voices.
const (
	VoiceOwnerService VoiceOwner = "service" // the catalog, the same for every caller
	VoiceOwnerProject VoiceOwner = "project" // the project's own clones
)

// VoiceStatus is the training state of a clone; a catalog voice has none
// (""). [VoiceStatus.Terminal] reports whether it will change no more.
type VoiceStatus = model.VoiceStatus

// The training states of a clone.
const (
	VoiceTraining VoiceStatus = "running" // training; the wire value is "running"
	VoiceDone     VoiceStatus = "done"
	VoiceError    VoiceStatus = "error" // training failed or timed out; refunded
)

// Template is a ready-made style for one feature: ID, Title, Category,
// Feature and Previews; resolve a preview to a prompt with
// [Client.TemplatePrompt].
type Template = model.Template

// TemplatePreviewRef is one preview of a [Template]: ID, Gender, and Image
// and Video URLs that expire after about 6 hours.
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
