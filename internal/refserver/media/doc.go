// Package media makes small, deterministic media files for the reference
// server's generation outputs and inspects uploaded bytes.
//
// Encoders (PNG, WAV, MP4) are pure functions of their arguments, so tests can
// compare outputs byte for byte; the seed only changes the look or the tone so
// that different generations produce different files. Videos (Clip) are real:
// H.264 Constrained Baseline pictures of flat-coloured macroblocks that
// decoders reconstruct exactly (h264.go), with an optional lossless FLAC
// track, muxed into MP4 (mp4video.go).
//
// The inspectors (Detect, ImageConfig, AudioDuration, ProbeAudio, ProbeMP4,
// Validate) read untrusted upload bytes: they never trust a length field
// beyond the bytes actually present, never allocate in proportion to a
// declared size beyond a fixed budget (Validate's, for the few images it
// must decode), and return errors instead of panicking.
package media
