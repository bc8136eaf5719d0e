package upload

import "errors"

// Limits the service enforces and this package checks before sending.
const (
	// MaxFileSize is the largest file the service accepts, inclusive.
	MaxFileSize int64 = 30 << 20
	// MaxParts is the most files one [Multipart] request may carry.
	MaxParts = 10
)

// Errors to match with errors.Is; all but ErrSizeMismatch come before
// anything is sent.
var (
	// ErrTooLarge means the file is larger than MaxFileSize.
	ErrTooLarge = errors.New("upload: file larger than 30 MB (31,457,280 bytes)")
	// ErrEmpty means the file has no bytes; the service stores nothing empty.
	ErrEmpty = errors.New("upload: file is empty")
	// ErrTooManyParts means a Multipart call got more than MaxParts parts.
	ErrTooManyParts = errors.New("upload: more than 10 parts in one multipart request")
	// ErrNoParts means a Multipart call got no parts at all.
	ErrNoParts = errors.New("upload: no parts to upload")
	// ErrUnsupportedType means the media type, given or detected, is not one
	// of AcceptedTypes.
	ErrUnsupportedType = errors.New("upload: media type not accepted by the service")
	// ErrSizeMismatch means the source held fewer or more bytes than the
	// size given; the request is aborted rather than sent short.
	ErrSizeMismatch = errors.New("upload: source size differs from the declared size")
)
