// Package media is the reference server's codec package: it reads and
// writes the media formats the server takes in and gives out, as image/png
// does for PNG. It writes small, deterministic outputs (PNG, WAV, MP4 video
// with an optional lossless FLAC track) and reads the same formats, one
// reader per format, both to validate uploads and, in tests, to check its
// own outputs.
//
// Writers are pure functions of their arguments, so tests can compare
// outputs byte for byte; the seed only changes the look or the tone so that
// different generations produce different files. Videos (Clip) are real:
// H.264 Constrained Baseline pictures of flat-coloured macroblocks that
// decoders reconstruct exactly (h264.go), muxed into MP4 (mp4video.go).
//
// Readers (Detect, ImageConfig, AudioDuration, ProbeAudio, ProbeMP4,
// Validate) take untrusted bytes: they never trust a length field beyond
// the bytes actually present, never allocate in proportion to a declared
// size beyond a fixed budget (Validate's, for the few images it must
// decode), and return errors instead of panicking. Detect names bytes with
// internal/mediatype's sniffer, the one package upload uses.
package media
