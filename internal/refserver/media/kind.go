package media

import "github.com/mediagen/mediagen-go/internal/mediatype"

// Kind is the broad class of a media type, used to decide which uploads may
// serve as which generation inputs: internal/mediatype's, which upload
// checks against too.
type Kind = mediatype.Kind

// The kinds a media type can belong to.
const (
	Image    = mediatype.Image
	Audio    = mediatype.Audio
	Video    = mediatype.Video
	Document = mediatype.Document
	// Unknown is returned for bytes or media types the service does not accept.
	Unknown Kind = "unknown"
)
