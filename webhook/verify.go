package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// maxTimestampDigits bounds the timestamp header; unix seconds fit in 19 digits.
const maxTimestampDigits = 19

// Verify checks that payload was signed by the service with secret, or with
// one of WithSecrets, within the tolerance of now, and returns nil if so.
// payload must be the raw request body, byte for byte: a body decoded and
// encoded again no longer matches. Otherwise the error wraps one of
// ErrMissingHeader, ErrInvalidTimestamp, ErrTimestampTooOld,
// ErrTimestampInFuture, ErrNoValidSignature, ErrNoSecret or ErrInvalidOption.
//
// The HMAC is computed once per secret and compared with every well-formed
// sha256 entry of the signature header in constant time. Malformed entries
// and entries of other schemes are skipped; at most 16 entries are examined.
// The timestamp is checked first, so a stale delivery costs no pass over the body.
func Verify(payload []byte, header http.Header, secret string, opts ...Option) error {
	o, err := newOptions(secret, opts)
	if err != nil {
		return err
	}
	d, err := o.readHeaders(header)
	if err != nil {
		return err
	}
	return o.match(d, payload)
}

// signed is what the headers of a delivery say: the timestamp text and the
// digests of the well-formed entries.
type signed struct {
	timestamp string
	sums      [][sha256.Size]byte
}

// readHeaders checks everything that does not need the body, so that a
// stale or unsigned request is refused before the body is read or hashed.
func (o *options) readHeaders(header http.Header) (signed, error) {
	ts, err := o.timestamp(header)
	if err != nil {
		return signed{}, err
	}
	values := header.Values(HeaderSignature)
	if len(values) == 0 || (len(values) == 1 && values[0] == "") {
		return signed{}, fmt.Errorf("%w: %s", ErrMissingHeader, HeaderSignature)
	}
	sums := parseSignatures(values)
	if len(sums) == 0 {
		return signed{}, fmt.Errorf("%w: no well-formed %s entry", ErrNoValidSignature, scheme)
	}
	return signed{timestamp: ts, sums: sums}, nil
}

// match hashes the body once per secret and compares with every entry.
func (o *options) match(d signed, payload []byte) error {
	for _, secret := range o.secrets {
		want := computeMAC(secret, d.timestamp, payload)
		for i := range d.sums {
			if hmac.Equal(want[:], d.sums[i][:]) {
				return nil
			}
		}
	}
	return ErrNoValidSignature
}

// timestamp returns the raw timestamp text, which is what was signed, once it
// is known to be one decimal unix time within the tolerance of now.
func (o *options) timestamp(header http.Header) (string, error) {
	values := header.Values(HeaderTimestamp)
	switch {
	case len(values) == 0 || (len(values) == 1 && values[0] == ""):
		return "", fmt.Errorf("%w: %s", ErrMissingHeader, HeaderTimestamp)
	case len(values) > 1:
		return "", fmt.Errorf("%w: %d values", ErrInvalidTimestamp, len(values))
	}
	// Digits only (no sign, no spaces), fitting an int64.
	ts := values[0]
	u, err := strconv.ParseUint(ts, 10, 63)
	if len(ts) > maxTimestampDigits || err != nil {
		return "", ErrInvalidTimestamp
	}
	secs := int64(u)
	// Comparing instants (not a difference) keeps sub-second precision at the
	// boundary; the first test keeps time.Unix from wrapping on absurd values.
	now := o.now()
	signedAt := time.Unix(secs, 0)
	switch {
	case secs > now.Unix()+int64(o.tolerance/time.Second)+1 || signedAt.After(now.Add(o.tolerance)):
		return "", fmt.Errorf("%w: signed %ds ahead, tolerance %v", ErrTimestampInFuture, secs-now.Unix(), o.tolerance)
	case signedAt.Before(now.Add(-o.tolerance)):
		return "", fmt.Errorf("%w: signed %ds ago, tolerance %v", ErrTimestampTooOld, now.Unix()-secs, o.tolerance)
	}
	return ts, nil
}
