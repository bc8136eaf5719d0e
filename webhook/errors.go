package webhook

import "errors"

// Errors returned by Verify and Parse, and reported by Handler. Test for them with errors.Is:
// the returned error may wrap one of them with a detail such as the age of a
// stale timestamp. None of them carries the expected signature or a secret.
var (
	// ErrMissingHeader means the timestamp or the signature header is absent or empty.
	ErrMissingHeader = errors.New("webhook: missing signature header")

	// ErrInvalidTimestamp means the timestamp header is not a single unix time in decimal seconds.
	ErrInvalidTimestamp = errors.New("webhook: invalid timestamp")

	// ErrTimestampTooOld means the delivery was signed longer ago than the tolerance,
	// which is how a replayed delivery shows.
	ErrTimestampTooOld = errors.New("webhook: timestamp too old")

	// ErrTimestampInFuture means the delivery claims to be signed further in the future than the tolerance.
	ErrTimestampInFuture = errors.New("webhook: timestamp in the future")

	// ErrNoValidSignature means no well-formed sha256 entry of the signature header
	// matches the payload under any of the configured secrets.
	ErrNoValidSignature = errors.New("webhook: no valid signature")

	// ErrNoSecret means no non-empty secret was configured. An empty key would
	// let anyone sign, so it is refused rather than used.
	ErrNoSecret = errors.New("webhook: no signing secret configured")

	// ErrInvalidPayload means a correctly signed body is not a webhook event:
	// it is not JSON, has no event name, or a known event lacks its generation or voice.
	ErrInvalidPayload = errors.New("webhook: invalid event payload")

	// ErrInvalidOption means an option was given a value it cannot use, such as a negative tolerance.
	ErrInvalidOption = errors.New("webhook: invalid option")
)
