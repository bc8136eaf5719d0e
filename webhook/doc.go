// Package webhook verifies and receives the signed webhook deliveries of the
// media generation service, with the standard library only.
//
// The service posts a JSON event ({"event": "generation.done", "generation":
// {...}}, or "voice" for voice events) with HeaderTimestamp, the unix time of
// sending, and HeaderSignature: one sha256=<hex> entry per secret (two during
// the 24 hours after a rotation), each the HMAC-SHA256 of
// "<timestamp>.<raw body>".
//
// Verify checks a delivery, byte for byte as received; Parse also decodes the
// Event. Handler (see its example) does both behind an http.Handler that caps
// the body and the time to read it, drops repeated deliveries (replicas share
// an SQLStore) and answers within the service's 5-second window. Sign,
// SignatureHeader and SetHeaders sign as the service does, for tests.
package webhook
