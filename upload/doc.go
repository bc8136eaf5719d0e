// Package upload sends reference files (images, audio, video, documents) to
// the media generation service and returns the file ids that generation
// arguments take.
//
// [File] and [Reader] use the two-step signed upload: they reserve an id for
// the exact byte count and media type, then PUT the bytes to the storage URL
// with exactly the signed Content-Type and Content-Length and never the API
// key. The bytes are streamed, so memory does not grow with the file. A PUT
// that fails transiently (connection error, 429, 502, 503, 504) is retried
// when the source can be read again, and a refused URL (expired after 15
// minutes) is replaced by a fresh reservation.
//
// [Multipart] sends up to [MaxParts] files in one multipart request, also
// streamed.
//
// Every call checks sizes, counts and media types before anything is sent:
// files larger than [MaxFileSize] or empty, more than [MaxParts] parts, and
// media types the service does not accept are refused locally, with errors
// that match [ErrTooLarge], [ErrEmpty], [ErrTooManyParts] and
// [ErrUnsupportedType]. The accepted media types are listed on
// [AcceptedTypes].
//
// An upload takes options of this package's own [Option] type; the options
// of package client (a timeout, middleware, a retry policy) reach its
// requests through [WithClientOptions]. An option given where it does not
// apply does not compile, and a bad one fails the upload before anything is
// read or sent.
package upload
