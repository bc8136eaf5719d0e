package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/charge"
)

// ErrIdempotencyMismatch fails a call whose idempotency key was used with other arguments; nothing is sent.
var ErrIdempotencyMismatch = charge.ErrMismatch

// MaxIdempotencyKey is the longest idempotency key, in bytes.
const MaxIdempotencyKey = 255

// DefaultJournalHold is how long a caller holds a key, renewed every third of it. Once a hold lapses (its
// holder died) the next caller searches for what the holder sent before sending anything itself.
const DefaultJournalHold = time.Minute

// WithJournal makes keyed calls record themselves in j, so a key charges once for every client sharing j
// (across machines with a [journal.SQL]); by default a client keeps its own in memory. New only.
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
//   - a call the service refused (400, 401, 402, 403, 429) frees the key.
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

// Resumable is a generation the journal recorded that is not terminal, or whose outputs are not saved.
type Resumable struct {
	Key        string               // the idempotency key of the call that created it
	Generation *mediagen.Generation // as read from the service now
}

// Unfinished yields the keyed generations of the journal not finished or not saved, oldest first, read
// afresh, for a restarted program to wait on and save ([Client.SaveOutput] with [WithIdempotencyKey]).
// One found terminal is recorded as finished; one the service no longer has, as finished and saved, and
// is yielded as an error matching [ErrNotFound]. Voice clones are not listed.
func (c *Client) Unfinished(ctx context.Context, opts ...Option) iter.Seq2[Resumable, error] {
	return func(yield func(Resumable, error) bool) {
		cfg, err := c.configure(opts)
		if err != nil {
			yield(Resumable{}, err)
			return
		}
		j := cfg.s.journal
		recs, err := j.Unfinished(ctx)
		if err != nil {
			yield(Resumable{}, fmt.Errorf("mediagen: journal: %w", err))
			return
		}
		for _, r := range recs {
			if r.Op != "generation" {
				continue
			}
			g, err := c.getGeneration(ctx, cfg, r.ID)
			switch {
			case errors.Is(err, ErrNotFound):
				_ = j.Mark(ctx, r.Key, true, true)
				err = fmt.Errorf("mediagen: generation %s of idempotency key %q is gone: %w", r.ID, r.Key, err)
				if !yield(Resumable{Key: r.Key}, err) {
					return
				}
				continue
			case err != nil:
				yield(Resumable{Key: r.Key}, err)
				return
			case g.Terminal() && !r.Finished:
				if err := j.Mark(ctx, r.Key, true, false); err != nil {
					yield(Resumable{Key: r.Key, Generation: g}, fmt.Errorf("mediagen: journal: %w", err))
					return
				}
			}
			if g.Terminal() && g.Status != mediagen.GenerationStatusDone {
				_ = j.Mark(ctx, r.Key, true, true) // nothing to save
			}
			if !yield(Resumable{Key: r.Key, Generation: g}, nil) {
				return
			}
		}
	}
}

// markSaved records in the journal that the outputs of the call's key's generation were saved.
func (c *Client) markSaved(ctx context.Context, cfg *config) error {
	if cfg.s.idemKey == "" {
		return nil
	}
	if err := cfg.s.journal.Mark(ctx, cfg.s.idemKey, true, true); err != nil && !errors.Is(err, journal.ErrNotFound) {
		return fmt.Errorf("mediagen: journal: recording the save: %w", err)
	}
	return nil
}

// priceCache holds the last price list [Client.Pricing] read, for the estimate a keyed call records;
// it reads none itself, so a charging call sends no other request.
type priceCache struct{ atomic.Pointer[Pricing] }

// estimate returns the most args may cost, or 0 when that is not known.
func (pc *priceCache) estimate(args Args) float64 {
	if p := pc.Load(); p != nil {
		if e, err := p.Estimate(args); err == nil {
			return e.Max
		}
	}
	return 0
}
