package client

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/charge"
)

// ErrIdempotencyMismatch is the error of a call whose idempotency key was
// already used with other arguments. Nothing was sent.
var ErrIdempotencyMismatch = charge.ErrMismatch

// MaxIdempotencyKey is the longest idempotency key, in bytes.
const MaxIdempotencyKey = 255

// DefaultJournalHold is how long a caller holds a key while it sends, unless
// it renews the hold, which it does every third of it while it works. Other
// callers wait for a live holder; once a hold lapses (its holder died) the
// next caller searches for what the holder may have sent before sending
// anything itself. See [WithJournalHold].
const DefaultJournalHold = time.Minute

// WithJournal makes the calls given [WithIdempotencyKey] record themselves
// in j, so that a key charges once for every client that shares j: in one
// process with [journal.NewMemory], across processes and machines with a
// [journal.SQL] on a shared database. Without it a client keeps its own
// journal in memory. New only.
func WithJournal(j journal.Journal) Option {
	return func(s *settings) error {
		if err := s.newOnly("WithJournal"); err != nil {
			return err
		}
		if j == nil {
			return errors.New("mediagen: WithJournal: nil journal")
		}
		s.journal = j
		return nil
	}
}

// WithJournalHold sets how long a key is held by a caller that stops
// renewing it (one that died mid-call) before another caller may take it
// over; the default is [DefaultJournalHold]. Shorter holds resume sooner
// after a crash; a hold must outlast a request's trip to the service, so
// it cannot be under 1 s. New only.
func WithJournalHold(d time.Duration) Option {
	return func(s *settings) error {
		if err := s.newOnly("WithJournalHold"); err != nil {
			return err
		}
		if d < time.Second {
			return fmt.Errorf("mediagen: WithJournalHold(%s): want at least 1s", d)
		}
		s.hold = d
		return nil
	}
}

// WithIdempotencyKey makes a charging call ([Client.CreateGeneration],
// [Client.CloneVoice]) charge once per key, for every client that shares
// the journal ([WithJournal]):
//
//   - the first call records its intent before sending, then the id;
//   - a later call with the key returns the recorded generation or voice,
//     read fresh from the service, and charges nothing;
//   - a call that finds the key held by a live caller waits for its
//     outcome; one that finds the holder dead searches for what it sent and
//     sends only when nothing is there;
//   - the key with other arguments fails with [ErrIdempotencyMismatch];
//   - a call the service refused (400, 402, 403) frees the key.
//
// A key is 1 to [MaxIdempotencyKey] bytes. Given to [Client.SaveOutput], it
// records that the outputs of the key's generation were saved
// ([Client.Unfinished]). Per call only.
func WithIdempotencyKey(key string) Option {
	return func(s *settings) error {
		if !s.perCall || s.shared {
			return errors.New("mediagen: WithIdempotencyKey applies to one call; pass it to the call, not to New or to options shared by many calls")
		}
		if key == "" || len(key) > MaxIdempotencyKey {
			return fmt.Errorf("%w: idempotency key of %d bytes: want 1 to %d", ErrInvalidArgument, len(key), MaxIdempotencyKey)
		}
		s.idemKey = key
		return nil
	}
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
