package media

// Canonical media types returned by Detect and stored by the service.
const (
	TypePNG       = "image/png"
	TypeJPEG      = "image/jpeg"
	TypeGIF       = "image/gif"
	TypeWebP      = "image/webp"
	TypeWAV       = "audio/wav"
	TypeMP3       = "audio/mpeg"
	TypeOGG       = "audio/ogg"
	TypeFLAC      = "audio/flac"
	TypeM4A       = "audio/mp4"
	TypeWebMAudio = "audio/webm"
	TypeMP4       = "video/mp4"
	TypeQuickTime = "video/quicktime"
	TypeWebM      = "video/webm"
	TypePDF       = "application/pdf"
	TypeZIP       = "application/zip"
	TypeJSON      = "application/json"
	TypeText      = "text/plain"
	// TypeOctetStream is what Detect returns for bytes it does not recognize.
	TypeOctetStream = "application/octet-stream"
)
