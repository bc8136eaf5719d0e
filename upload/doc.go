// Package upload sends reference files (images, audio, video, documents) to
// the media generation service and returns the file ids that generation
// arguments take.
//
// [File] and [Reader] use the two-step signed upload: reserve an id for the
// exact byte count and media type, then PUT the bytes, streamed, to the
// storage URL with exactly the signed headers and never the API key.
// [Multipart] sends up to [MaxParts] files in one streamed request.
//
// Sizes, counts and media types ([AcceptedTypes]) are checked before
// anything is sent. Options are this package's own [Option] type; client
// options reach the requests through [WithClientOptions].
package upload
