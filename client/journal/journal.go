// Package journal records charging calls made with an idempotency key, so
// that a key charges once across goroutines, processes, restarts and
// replicas that share the journal. Package client runs the protocol
// ([github.com/mediagen/mediagen-go/client.WithIdempotencyKey]); a journal
// only stores records and changes them atomically. [Memory] serves one
// process, [SQL] every process sharing a PostgreSQL or SQLite table.
//
// A record is held (claimed, lapsing at HeldUntil unless renewed; a caller
// that finds it lapsed takes it over only after searching for what the
// holder sent), then settled (ID set), or released (deleted: the service
// refused the call and charged nothing). Records are kept at least
// [Retention], then deleted in batches (Cleanup).
package journal

import (
	"context"
	"errors"
	"time"
)

// Record is the journal's entry for one idempotency key.
type Record struct {
	Key string
	// Op is "generation" or "voice"; Feature is as sent ("audio/voice-clone").
	Op, Feature string
	// Fingerprint identifies the arguments: the key with others is refused.
	Fingerprint string
	// Estimate is the price estimated before sending, in USD; 0 for none.
	Estimate float64
	// Holder names the caller that holds the key while it sends, until
	// HeldUntil on the wall clock (zero once settled).
	Holder    string
	HeldUntil time.Time
	// Started is when the holder took the key, on its client's clock: a
	// search for what it sent looks at rows requested after it.
	Started time.Time
	// ID is the generation's or voice's id, once known.
	ID string
	// Finished and Saved: the generation ended, its outputs were saved.
	Finished, Saved bool
	// Created is when the key was first claimed.
	Created time.Time
	// Trace is the W3C traceparent of the call's job span, "" for none: a
	// caller that takes the key over continues that trace.
	Trace string
}

// Held reports whether r is held by a live caller at now.
func (r Record) Held(now time.Time) bool { return r.ID == "" && now.Before(r.HeldUntil) }

// Journal stores records. Every method is atomic (two callers racing on one
// key see one outcome) and safe for concurrent use.
type Journal interface {
	// Claim stores r when r.Key has no record and returns r and true;
	// otherwise the stored record and false, changing nothing.
	Claim(ctx context.Context, r Record) (Record, bool, error)
	// Get returns the record of key, or ErrNotFound.
	Get(ctx context.Context, key string) (Record, error)
	// Take hands the key to holder until until, with Started set to started,
	// when the record still has prev's Holder and HeldUntil and no ID (the
	// hold lapsed and nobody took it since); it reports whether it did.
	Take(ctx context.Context, key string, prev Record, holder string, until, started time.Time) (bool, error)
	// Renew moves holder's hold to until; false when holder lost the key.
	Renew(ctx context.Context, key, holder string, until time.Time) (bool, error)
	// Settle records id and ends the hold; ErrNotHeld when holder lost the key.
	Settle(ctx context.Context, key, holder, id string) error
	// Release deletes the key when holder holds it and it has no ID.
	Release(ctx context.Context, key, holder string) error
	// Mark sets Finished and Saved, each only ever from false to true.
	Mark(ctx context.Context, key string, finished, saved bool) error
	// Unfinished returns the settled records not both Finished and Saved,
	// oldest first.
	Unfinished(ctx context.Context) ([]Record, error)
	// Cleanup deletes records created before before, in batches, and
	// returns how many.
	Cleanup(ctx context.Context, before time.Time) (int, error)
}

// Retention is how long records are kept at least: twice the service's 24
// hours, so a key used again meanwhile still finds its generation.
const Retention = 48 * time.Hour

var (
	// ErrNotFound is Get's error for a key without a record.
	ErrNotFound = errors.New("journal: no record for the key")
	// ErrNotHeld is Settle's error for a caller whose hold lapsed and was
	// taken over.
	ErrNotHeld = errors.New("journal: the key is not held by this caller")
)
