package upload

import (
	"errors"
	"fmt"
	"net/http"
)

// Limits the service enforces and this package checks before sending.
const (
	// MaxFileSize is the largest file the service accepts: 30 MB, counted
	// as 31,457,280 bytes. A file of exactly this size is accepted.
	MaxFileSize int64 = 30 << 20
	// MaxParts is the most files one [Multipart] request may carry.
	MaxParts = 10
)

// Errors to match with errors.Is; the returned errors wrap them with the file
// or part and the numbers. All but ErrSizeMismatch are returned before
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
	// ErrSizeMismatch means the source held fewer or more bytes than the size
	// given for it. It is reported while streaming, so the request is
	// aborted rather than sent short.
	ErrSizeMismatch = errors.New("upload: source size differs from the declared size")
)

// StorageError is a failed storage PUT of the signed upload: the storage host
// answered StatusCode, after any retries this package could make. A 403 means
// the signed URL was refused (expired or altered headers) even after a fresh
// reservation.
type StorageError struct {
	StatusCode int
	// Message is the start of the storage host's answer, capped in length.
	Message string
	// Retryable is true when the failure was transient (429 or a 5xx gateway
	// answer) but the source could not be read again to retry; passing an
	// io.ReaderAt or io.Seeker to Reader lets the package retry.
	Retryable bool
}

func (e *StorageError) Error() string {
	msg := fmt.Sprintf("upload: storage answered %d", e.StatusCode)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.StatusCode == http.StatusForbidden {
		msg += " (signed URL refused)"
	}
	if e.Retryable {
		msg += " (transient, but the source cannot be read again; pass an io.ReaderAt or io.Seeker to allow retries)"
	}
	return msg
}
