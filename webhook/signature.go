package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of a signed delivery.
const (
	// HeaderTimestamp carries the unix time of sending, in decimal seconds.
	HeaderTimestamp = "X-Service-Timestamp"

	// HeaderSignature carries one or more space-separated entries, each
	// sha256=<hex>, the HMAC-SHA256 of "<timestamp>.<raw body>".
	HeaderSignature = "X-Service-Signature"
)

// scheme prefixes every signature entry this package produces and accepts.
const scheme = "sha256="

// Sign returns the signature entry for payload sent at t, sha256=<hex>, as
// the service computes it with secret; t counts in whole seconds. It is meant
// for tests and for the reference server; a delivery needs HeaderTimestamp as
// well (see SetHeaders). Verify refuses an empty secret, so do not sign with one.
func Sign(secret string, t time.Time, payload []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	sum := computeMAC(secret, ts, payload)
	return scheme + hex.EncodeToString(sum[:])
}

// SignatureHeader returns the HeaderSignature value for payload sent at t:
// one entry per secret, space-separated, as the service sends during a
// rotation (new secret first, then the old one).
func SignatureHeader(secrets []string, t time.Time, payload []byte) string {
	entries := make([]string, len(secrets))
	for i, s := range secrets {
		entries[i] = Sign(s, t, payload)
	}
	return strings.Join(entries, " ")
}

// SetHeaders sets HeaderTimestamp and HeaderSignature on h for payload sent
// at t, signed with each of secrets: what a sender such as the reference
// server puts on a delivery, and what tests put on requests for Handler.
func SetHeaders(h http.Header, secrets []string, t time.Time, payload []byte) {
	h.Set(HeaderTimestamp, strconv.FormatInt(t.Unix(), 10))
	h.Set(HeaderSignature, SignatureHeader(secrets, t, payload))
}

// computeMAC is HMAC-SHA256 keyed with secret over "<timestamp>.<payload>",
// written piecewise so the body is never copied.
func computeMAC(secret, timestamp string, payload []byte) [sha256.Size]byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(payload)
	var sum [sha256.Size]byte
	m.Sum(sum[:0])
	return sum
}

// parseSignatures returns the digests of the well-formed sha256 entries in
// the values of HeaderSignature. Entries are separated by spaces, tabs or
// commas (a proxy may join repeated header lines with commas). Entries of
// another scheme, of the wrong length or not hex are skipped; at most
// maxEntries entries are examined, well-formed or not.
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
			if sum, ok := parseEntry(entry); ok {
				sums = append(sums, sum)
			}
		}
	}
	return sums
}

// parseEntry decodes one sha256=<64 hex digits> entry; the scheme name is
// matched without regard to case, the digits in either case.
func parseEntry(entry string) ([sha256.Size]byte, bool) {
	var sum [sha256.Size]byte
	if len(entry) != len(scheme)+2*sha256.Size || !strings.EqualFold(entry[:len(scheme)], scheme) {
		return sum, false
	}
	if _, err := hex.Decode(sum[:], []byte(entry[len(scheme):])); err != nil {
		return sum, false
	}
	return sum, true
}
