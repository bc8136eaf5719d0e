package client

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/charge"
)

// ErrIdempotencyMismatch is the error of a call whose idempotency key was used with other arguments.
// Nothing was sent.
var ErrIdempotencyMismatch = charge.ErrMismatch

// MaxIdempotencyKey is the longest idempotency key, in bytes.
const MaxIdempotencyKey = 255

// DefaultJournalHold is how long a caller holds a key while it sends, renewing the hold every third of it.
// Others wait for a live holder; once a hold lapses (its holder died) the next caller searches for what
// the holder may have sent before sending anything itself.
const DefaultJournalHold = time.Minute

// WithJournal makes keyed calls ([WithIdempotencyKey]) record themselves in j, so a key charges once for
// every client sharing j: in one process with [journal.NewMemory], across machines with a [journal.SQL].
// Without it a client keeps its own journal in memory. New only.
func WithJournal(j journal.Journal) Option {
	return newOnly("WithJournal", func(s *settings) error {
		return nonNil(j, "WithJournal: nil journal", &s.journal)
	})
}

// WithJournalHold sets how long a key is held by a caller that stops renewing it (one that died) before
// another may take it over; default [DefaultJournalHold], at least 1 s, to outlast a request. New only.
func WithJournalHold(d time.Duration) Option {
	return newOnly("WithJournalHold", func(s *settings) error {
		if d < time.Second {
			return fmt.Errorf("mediagen: WithJournalHold(%s): want at least 1s", d)
		}
		s.hold = d
		return nil
	})
}

// WithIdempotencyKey makes a charging call ([Client.CreateGeneration], [Client.CloneVoice]) charge once per
// key, for every client that shares the journal ([WithJournal]):
//
//   - the first call records its intent before sending, then the id;
//   - a later call with the key returns the recorded generation or voice, read afresh, charging nothing;
//   - a call finding the key held waits for a live holder's outcome; for a dead holder's, it searches
//     for what the holder sent and sends only when nothing is there;
//   - the key with other arguments fails with [ErrIdempotencyMismatch];
//   - a call the service refused (400, 402, 403) frees the key.
//
// A key is 1 to [MaxIdempotencyKey] bytes. Given to [Client.SaveOutput], it records that the outputs of
// the key's generation were saved ([Client.Unfinished]). Per call only.
func WithIdempotencyKey(key string) Option {
	return oneCall("WithIdempotencyKey", func(s *settings) error {
		if key == "" || len(key) > MaxIdempotencyKey {
			return fmt.Errorf("%w: idempotency key of %d bytes: want 1 to %d", ErrInvalidArgument, len(key), MaxIdempotencyKey)
		}
		s.idemKey = key
		return nil
	})
}

// fingerprint hashes what identifies a call's arguments.
func fingerprint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
