package webhook

import "errors"

// Errors of Verify, Parse and Handler; the returned error may wrap one with a
// detail (test with errors.Is). None carries the expected signature or a secret.
var (
	// ErrMissingHeader means the timestamp or the signature header is absent or empty.
	ErrMissingHeader = errors.New("webhook: missing signature header")
	// ErrInvalidTimestamp means the timestamp header is not one unix time in decimal seconds.
	ErrInvalidTimestamp = errors.New("webhook: invalid timestamp")
	// ErrTimestampTooOld means the delivery was signed longer ago than the tolerance: a replay.
	ErrTimestampTooOld = errors.New("webhook: timestamp too old")
	// ErrTimestampInFuture means the delivery claims to be signed beyond the tolerance ahead.
	ErrTimestampInFuture = errors.New("webhook: timestamp in the future")
	// ErrNoValidSignature means no well-formed sha256 entry matches under any secret.
	ErrNoValidSignature = errors.New("webhook: no valid signature")
	// ErrNoSecret means no non-empty secret was configured: an empty key would let anyone sign.
	ErrNoSecret = errors.New("webhook: no signing secret configured")
	// ErrInvalidPayload means a correctly signed body is not JSON, has no event
	// name, or a known event lacks its generation or voice.
	ErrInvalidPayload = errors.New("webhook: invalid event payload")
	// ErrInvalidOption means an option was given a value it cannot use.
	ErrInvalidOption = errors.New("webhook: invalid option")
)
