package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of a signed delivery.
const (
	// HeaderTimestamp carries the unix time of sending, in decimal seconds.
	HeaderTimestamp = "X-Service-Timestamp"
	// HeaderSignature carries space-separated sha256=<hex> entries, each the
	// HMAC-SHA256 of "<timestamp>.<raw body>".
	HeaderSignature = "X-Service-Signature"
)

const (
	scheme = "sha256="
	// maxEntries caps the signature entries examined, so a huge header costs little.
	maxEntries = 16
)

// Sign returns the signature entry (sha256=<hex>) of payload sent at t, in
// whole seconds, as the service computes it with secret; for tests and the
// reference server. Verify refuses an empty secret.
func Sign(secret string, t time.Time, payload []byte) string {
	sum := computeMAC(secret, strconv.FormatInt(t.Unix(), 10), payload)
	return scheme + hex.EncodeToString(sum[:])
}

// SignatureHeader returns the HeaderSignature value of payload sent at t: one
// entry per secret, as the service sends during a rotation (the new one first).
func SignatureHeader(secrets []string, t time.Time, payload []byte) string {
	entries := make([]string, len(secrets))
	for i, s := range secrets {
		entries[i] = Sign(s, t, payload)
	}
	return strings.Join(entries, " ")
}

// SetHeaders sets HeaderTimestamp and HeaderSignature on h for payload sent at
// t and signed with each of secrets, as a sender does.
func SetHeaders(h http.Header, secrets []string, t time.Time, payload []byte) {
	h.Set(HeaderTimestamp, strconv.FormatInt(t.Unix(), 10))
	h.Set(HeaderSignature, SignatureHeader(secrets, t, payload))
}

// computeMAC hashes "<timestamp>.<payload>" piecewise, so the body is never copied.
func computeMAC(secret, timestamp string, payload []byte) [sha256.Size]byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(payload)
	var sum [sha256.Size]byte
	m.Sum(sum[:0])
	return sum
}

// Verify checks that payload, the raw request body byte for byte, was signed
// with secret (or one of WithSecrets) within the tolerance of now. The error
// wraps one of the package's errors. The timestamp is checked first, so a stale
// delivery costs no pass over the body; each secret costs one pass, compared in
// constant time with each of at most 16 entries.
func Verify(payload []byte, header http.Header, secret string, opts ...Option) error {
	o, err := newOptions(secret, opts)
	if err != nil {
		return err
	}
	ts, sums, err := o.readHeaders(header)
	if err != nil {
		return err
	}
	return o.match(ts, sums, payload)
}

// readHeaders returns the timestamp text, which is what was signed, and the
// digests, checking all that needs no body, so that a stale or unsigned
// request is refused before its body is read.
func (o *options) readHeaders(header http.Header) (string, [][sha256.Size]byte, error) {
	values := header.Values(HeaderTimestamp)
	switch {
	case absent(values):
		return "", nil, fmt.Errorf("%w: %s", ErrMissingHeader, HeaderTimestamp)
	case len(values) > 1:
		return "", nil, fmt.Errorf("%w: %d values", ErrInvalidTimestamp, len(values))
	}
	// Digits only (no sign, no spaces), at most the 19 of an int64.
	ts := values[0]
	u, err := strconv.ParseUint(ts, 10, 63)
	if len(ts) > 19 || err != nil {
		return "", nil, ErrInvalidTimestamp
	}
	secs := int64(u)
	// Instants, not a difference, keep sub-second precision at the boundary;
	// the first test keeps time.Unix from wrapping on absurd values.
	now := o.now()
	signedAt := time.Unix(secs, 0)
	switch {
	case secs > now.Unix()+int64(o.tolerance/time.Second)+1 || signedAt.After(now.Add(o.tolerance)):
		return "", nil, fmt.Errorf("%w: signed %ds ahead, tolerance %v",
			ErrTimestampInFuture, secs-now.Unix(), o.tolerance)
	case signedAt.Before(now.Add(-o.tolerance)):
		return "", nil, fmt.Errorf("%w: signed %ds ago, tolerance %v", ErrTimestampTooOld, now.Unix()-secs, o.tolerance)
	}
	values = header.Values(HeaderSignature)
	if absent(values) {
		return "", nil, fmt.Errorf("%w: %s", ErrMissingHeader, HeaderSignature)
	}
	sums := parseSignatures(values)
	if len(sums) == 0 {
		return "", nil, fmt.Errorf("%w: no well-formed %s entry", ErrNoValidSignature, scheme)
	}
	return ts, sums, nil
}

func absent(values []string) bool {
	return len(values) == 0 || (len(values) == 1 && values[0] == "")
}

func (o *options) match(timestamp string, sums [][sha256.Size]byte, payload []byte) error {
	for _, secret := range o.secrets {
		want := computeMAC(secret, timestamp, payload)
		for i := range sums {
			if hmac.Equal(want[:], sums[i][:]) {
				return nil
			}
		}
	}
	return ErrNoValidSignature
}

// parseSignatures returns the digests of the well-formed sha256 entries,
// separated by spaces, tabs or commas (a proxy may join repeated headers with
// commas), of at most maxEntries entries examined.
func parseSignatures(values []string) [][sha256.Size]byte {
	var sums [][sha256.Size]byte
	examined := 0
	separator := func(r rune) bool { return r == ' ' || r == '\t' || r == ',' }
	for _, v := range values {
		for entry := range strings.FieldsFuncSeq(v, separator) {
			if examined == maxEntries {
				return sums
			}
			examined++
			// The scheme in any case, then 64 hex digits in any case.
			var sum [sha256.Size]byte
			if len(entry) != len(scheme)+2*sha256.Size || !strings.EqualFold(entry[:len(scheme)], scheme) {
				continue
			}
			if _, err := hex.Decode(sum[:], []byte(entry[len(scheme):])); err == nil {
				sums = append(sums, sum)
			}
		}
	}
	return sums
}
