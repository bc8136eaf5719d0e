package media

// Kind is the broad class of a media type, used to decide which uploads may
// serve as which generation inputs.
type Kind string

// The kinds a media type can belong to.
const (
	Image    Kind = "image"
	Audio    Kind = "audio"
	Video    Kind = "video"
	Document Kind = "document"
	// Unknown is returned for bytes or media types the service does not accept.
	Unknown Kind = "unknown"
)
