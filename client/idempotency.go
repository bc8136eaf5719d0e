package client

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/retry"
	"github.com/mediagen/mediagen-go/internal/wait"
)

// ErrIdempotencyMismatch is the error of a call whose idempotency key was
// already used with other arguments. Nothing was sent.
var ErrIdempotencyMismatch = errors.New("mediagen: idempotency key already used with other arguments")

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
		if !s.perCall {
			return errors.New("mediagen: WithIdempotencyKey applies to one call; pass it to the call, not to New")
		}
		if key == "" || len(key) > MaxIdempotencyKey {
			return fmt.Errorf("%w: idempotency key of %d bytes: want 1 to %d", ErrInvalidArgument, len(key), MaxIdempotencyKey)
		}
		s.idemKey = key
		return nil
	}
}

// journalOf returns the call's journal: the configured one, or the
// client's own in memory.
func (c *Client) journalOf(cfg *config) journal.Journal {
	if cfg.s.journal != nil {
		return cfg.s.journal
	}
	return c.memJournal
}

// newHolder names this client in the records it holds: host, process and a
// random part, so two clients of one process are told apart.
func newHolder() string {
	host, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// keyed is one charging call with an idempotency key.
type keyed[T any] struct {
	ch          charge[T]
	op, feature string
	fingerprint string
	estimate    float64
	get         func(ctx context.Context, id string) (*T, error) // reads a recorded row fresh
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

// submitKeyed runs the journal protocol of [WithIdempotencyKey] around
// submit. Nothing is sent until the key is recorded as held by this call.
func submitKeyed[T any](ctx context.Context, c *Client, cfg *config, k keyed[T]) (*T, error) {
	j, key, clock := c.journalOf(cfg), cfg.s.idemKey, cfg.s.clock
	hold := cfg.s.hold
	// Each call holds in its own name, so two goroutines of this client
	// racing on a key are told apart as two processes are.
	holder := c.holder + "/" + strconv.FormatUint(c.calls.Add(1), 10)
	log := cfg.s.logger.With(slog.String("idempotency_key", key))
	for n := 0; ; n++ {
		// A hold is a lease between processes, on the wall clock: a test
		// clock, which waits move forward, must not lapse a live holder.
		// Started bounds a search, so it is on the client's clock, the one
		// its searches compare with the service's.
		now, started := time.Now(), clock.Now()
		rec := journal.Record{Key: key, Op: k.op, Feature: k.feature, Fingerprint: k.fingerprint, Estimate: k.estimate,
			Holder: holder, HeldUntil: now.Add(hold), Started: started, Created: now}
		got, mine, err := j.Claim(ctx, rec)
		if err != nil {
			return nil, fmt.Errorf("mediagen: journal: recording the call before sending it: %w", err)
		}
		var win *searchWindow // set when a dead holder may have sent
		if !mine {
			switch {
			case got.Fingerprint != k.fingerprint:
				return nil, fmt.Errorf("%w: key %q", ErrIdempotencyMismatch, key)
			case got.ID != "":
				row, err := k.get(ctx, got.ID)
				if errors.Is(err, ErrNotFound) {
					return nil, fmt.Errorf("mediagen: the %s of idempotency key %q, %s, is gone (expired or deleted): %w", k.ch.what, key, got.ID, err)
				}
				return row, err
			case got.Held(now):
				d := min(retry.Backoff(100*time.Millisecond, 2*time.Second, n), got.HeldUntil.Sub(now)+10*time.Millisecond)
				if err := wait.Sleep(ctx, d); err != nil {
					return nil, err
				}
				continue
			}
			// The search window keeps the key's first start: every earlier
			// holder's send, not only the last one's, must stay findable.
			took, err := j.Take(ctx, key, got, holder, now.Add(hold), got.Started)
			if err != nil {
				return nil, fmt.Errorf("mediagen: journal: taking over a lapsed key: %w", err)
			}
			if !took {
				continue // another caller took it first: wait for that one
			}
			log.DebugContext(ctx, "mediagen: took over a key whose holder stopped; searching for what it sent", slog.String("holder", got.Holder))
			win = &searchWindow{start: got.Started}
		}
		return sendKeyed(ctx, c, cfg, j, holder, k, win, log)
	}
}

// sendKeyed runs the call as the key's holder: it first searches for what a
// dead holder sent (win), renews the hold while it works, and records the
// outcome.
func sendKeyed[T any](ctx context.Context, c *Client, cfg *config, j journal.Journal, holder string, k keyed[T], win *searchWindow, log *slog.Logger) (*T, error) {
	key := cfg.s.idemKey
	stop := renewHold(ctx, cfg, j, key, holder, log)
	defer stop()
	var row *T
	var err error
	if win != nil {
		row, err = search(ctx, c, k.ch, *win)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			ue := &UncertainError{Op: k.ch.what, Start: win.start, End: cfg.s.clock.Now(), Err: err, win: *win, found: newFinding()}
			k.ch.blame(ue)
			return nil, ue // the hold lapses: the next call searches again
		}
	}
	if row == nil {
		row, err = submit(ctx, c, cfg, k.ch)
	}
	switch {
	case err == nil:
		// A failure to record leaves the key held; once the hold lapses,
		// the next call finds this row by searching, so it is not sent twice.
		if serr := j.Settle(context.WithoutCancel(ctx), key, holder, k.ch.id(row)); serr != nil {
			log.WarnContext(ctx, "mediagen: journal: could not record the id; the next call with the key will search for it",
				slog.String("id", k.ch.id(row)), slog.String("error", serr.Error()))
		}
		if k.op != "generation" {
			// A clone has no outputs to save: nothing to resume.
			_ = j.Mark(context.WithoutCancel(ctx), key, true, true)
		}
		c.cleanJournal(ctx, j, log)
		return row, nil
	case refusedByService(err):
		if rerr := j.Release(context.WithoutCancel(ctx), key, holder); rerr != nil {
			log.WarnContext(ctx, "mediagen: journal: could not free the key of a refused call", slog.String("error", rerr.Error()))
		}
	}
	return nil, err
}

// refusedByService reports whether err is the service refusing the call,
// which charged nothing: 400, 402, 403, or a 429 the retries did not
// outlast.
func refusedByService(err error) bool {
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		return errors.Is(err, ErrInvalidArgument)
	}
	switch apiErr.StatusCode {
	case 400, 402, 403, 429:
		return true
	}
	return false
}

// renewHold renews the hold every third of it, on the wall clock, until
// the returned function is called.
func renewHold(ctx context.Context, cfg *config, j journal.Journal, key, holder string, log *slog.Logger) func() {
	hold := cfg.s.hold
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(hold / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			ok, err := j.Renew(context.WithoutCancel(ctx), key, holder, time.Now().Add(hold))
			if err != nil || !ok {
				log.WarnContext(ctx, "mediagen: journal: could not renew the hold", slog.Bool("held", ok), slog.Any("error", err))
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// cleanupEvery is how often a client deletes the journal's old records.
const cleanupEvery = time.Hour

// cleanJournal deletes, at most once per cleanupEvery for this client,
// the records older than journal.Retention, in the journal's batches: the
// table stays small without a scheduled job. A failure only logs: the next
// hour tries again.
func (c *Client) cleanJournal(ctx context.Context, j journal.Journal, log *slog.Logger) {
	now := time.Now()
	last := c.lastCleanup.Load()
	if now.UnixNano()-last < int64(cleanupEvery) || !c.lastCleanup.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	n, err := j.Cleanup(context.WithoutCancel(ctx), now.Add(-journal.Retention))
	if err != nil {
		log.DebugContext(ctx, "mediagen: journal: cleanup failed", slog.String("error", err.Error()))
		return
	}
	if n > 0 {
		log.DebugContext(ctx, "mediagen: journal: deleted old records", slog.Int("records", n))
	}
}
