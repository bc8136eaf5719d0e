// Package journal records charging calls made with an idempotency key, so
// that a key charges once across goroutines, processes, restarts and
// replicas that share the journal. Package client does the protocol
// ([github.com/mediagen/mediagen-go/client.WithJournal],
// [github.com/mediagen/mediagen-go/client.WithIdempotencyKey]); a journal
// only stores records and changes them atomically.
//
// Two kinds are provided: [Memory], for one process, and [SQL], on
// database/sql with a table in PostgreSQL or SQLite shared by every process
// that uses the same database.
//
// A record goes through these states:
//
//   - held: a caller claimed the key (Claim) and may be sending; its hold
//     lapses at HeldUntil unless renewed (Renew). A caller that finds the
//     hold lapsed may take the key over (Take), but only after searching
//     for what the previous holder sent.
//   - settled: the call's generation or voice is known (Settle sets ID).
//   - released: the service refused the call, which charged nothing, and
//     the key was deleted (Release), so it can be used again.
//
// Records are kept at least 48 hours after they are created (the service
// forgets generations after 24) and then deleted in batches (Cleanup).
package journal

import (
	"context"
	"errors"
	"time"
)

// Record is the journal's entry for one idempotency key.
type Record struct {
	Key string
	// Op is what the call does: "generation" or "voice".
	Op string
	// Feature is the feature as sent ("audio/voice-clone" for a clone).
	Feature string
	// Fingerprint identifies the call's arguments: the same key with other
	// arguments is refused.
	Fingerprint string
	// Estimate is the call's price as estimated before sending, in USD; 0
	// when it was not estimated.
	Estimate float64
	// Holder names the caller that holds the key while it sends.
	Holder string
	// HeldUntil is when the hold lapses unless renewed, on the wall clock;
	// zero once settled.
	HeldUntil time.Time
	// Started is when the current holder took the key, on the clock of the
	// holder's client: a search for what it may have sent looks at rows
	// requested after it.
	Started time.Time
	// ID is the generation's or voice's id, once known.
	ID string
	// Finished is set once the generation reached a terminal state, and
	// Saved once its outputs were saved; see client.Unfinished.
	Finished, Saved bool
	// Created is when the key was first claimed.
	Created time.Time
	// Trace is the W3C traceparent of the call's job span, "" when it was
	// not traced: a caller that takes the key over continues that trace.
	Trace string
}

// Held reports whether r is held by a live caller at now.
func (r Record) Held(now time.Time) bool { return r.ID == "" && now.Before(r.HeldUntil) }

// Journal stores records. Every method is atomic: two callers that race on
// one key see one outcome. Implementations must be safe for concurrent use.
type Journal interface {
	// Claim stores r when r.Key has no record and returns r and true;
	// otherwise it returns the stored record and false, changing nothing.
	Claim(ctx context.Context, r Record) (Record, bool, error)
	// Get returns the record of key; ErrNotFound when there is none.
	Get(ctx context.Context, key string) (Record, error)
	// Take hands the key over to holder, until until, with Started set to
	// started, when its stored record still has prev's Holder and HeldUntil
	// and no ID: the hold of prev lapsed and nobody took it since. It
	// reports whether it did.
	Take(ctx context.Context, key string, prev Record, holder string, until, started time.Time) (bool, error)
	// Renew moves the hold of holder to until; false when holder no longer
	// holds the key.
	Renew(ctx context.Context, key, holder string, until time.Time) (bool, error)
	// Settle records id as the key's outcome and ends the hold; it fails
	// with ErrNotHeld when holder no longer holds the key.
	Settle(ctx context.Context, key, holder, id string) error
	// Release deletes the key when holder holds it and it has no ID.
	Release(ctx context.Context, key, holder string) error
	// Mark sets Finished and Saved (each only ever from false to true) on
	// the record of key.
	Mark(ctx context.Context, key string, finished, saved bool) error
	// Unfinished returns the settled records that are not both Finished and
	// Saved, oldest first.
	Unfinished(ctx context.Context) ([]Record, error)
	// Cleanup deletes records created before before, in batches, and
	// returns how many it deleted.
	Cleanup(ctx context.Context, before time.Time) (int, error)
}

// Retention is how long records are kept at least: twice the service's 24
// hours, so a key used again within that time still finds its generation.
const Retention = 48 * time.Hour

var (
	// ErrNotFound is the error of Get for a key without a record.
	ErrNotFound = errors.New("journal: no record for the key")
	// ErrNotHeld is the error of Settle by a caller that no longer holds
	// the key: its hold lapsed and another caller took it over.
	ErrNotHeld = errors.New("journal: the key is not held by this caller")
)
