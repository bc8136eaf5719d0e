package charge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/retry"
	"github.com/mediagen/mediagen-go/internal/telemetry"
)

// ErrMismatch is the error of a call whose idempotency key was already used
// with other arguments; nothing was sent.
var ErrMismatch = errors.New("mediagen: idempotency key already used with other arguments")

// submitKeyed runs submit as the holder of an idempotency key: nothing is
// sent before the journal records the hold. A settled key returns its row
// afresh, charging nothing; a live holder is waited for; a dead one's key
// is taken over after a search for what it sent; another fingerprint is
// [ErrMismatch]; a call the service refused frees the key.
func submitKeyed[T any](ctx context.Context, p *Protocol, call *Call, op Op[T], rec journal.Record) (*T, error) {
	j, key := call.Journal, call.Key
	// Each call holds in its own name: two goroutines racing on a key are
	// told apart as two processes are.
	holder := p.holder + "/" + strconv.FormatUint(p.calls.Add(1), 10)
	log := call.Logger.With(slog.String("idempotency_key", key))
	for n := 0; ; n++ {
		// A hold is a lease between processes, on the wall clock: a test
		// clock that waits move must not lapse a live holder. Started bounds
		// a search, so it is on the client's clock, as searches compare.
		now, started := time.Now(), call.Clock.Now()
		r := rec
		r.Key, r.Holder, r.HeldUntil, r.Started, r.Created = key, holder, now.Add(call.Hold), started, now
		got, mine, err := j.Claim(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("mediagen: journal: recording the call before sending it: %w", err)
		}
		var win *Window // set when a dead holder may have sent
		if !mine {
			switch {
			case got.Fingerprint != rec.Fingerprint:
				return nil, fmt.Errorf("%w: key %q", ErrMismatch, key)
			case got.ID != "":
				telemetry.MarkReused(ctx)
				row, err := op.Get(ctx, got.ID)
				if err != nil && p.errs.NotFound(err) {
					return nil, fmt.Errorf("mediagen: the %s of idempotency key %q, %s, is gone (expired or deleted): %w", op.What(), key, got.ID, err)
				}
				return row, err
			case got.Held(now):
				d := min(retry.Backoff(100*time.Millisecond, 2*time.Second, n), got.HeldUntil.Sub(now)+10*time.Millisecond)
				if err := retry.Wall.Sleep(ctx, d); err != nil {
					return nil, err
				}
				continue
			}
			// Keep the key's first start: every earlier holder's send must
			// stay findable, not only the last one's.
			took, err := j.Take(ctx, key, got, holder, now.Add(call.Hold), got.Started)
			if err != nil {
				return nil, fmt.Errorf("mediagen: journal: taking over a lapsed key: %w", err)
			}
			if !took {
				continue // another caller took it first: wait for that one
			}
			if id, ok := p.unsettled.Load(key); ok {
				return settleFound(ctx, p, j, key, holder, id.(string), op, log)
			}
			log.DebugContext(ctx, "mediagen: took over a key whose holder stopped; searching for what it sent", slog.String("holder", got.Holder))
			// clockSkew more than after an ambiguous failure: Started is on
			// the dead holder's clock, maybe another machine's.
			win = &Window{Start: got.Started, Margin: p.lag.margin() + clockSkew}
		}
		return sendKeyed(ctx, p, call, j, holder, now.Add(call.Hold), op, win, rec.Op, log)
	}
}

// sendKeyed runs the call as the key's holder, held until until: it searches
// first for what a dead holder sent (win), renews the hold meanwhile, and
// records the outcome.
func sendKeyed[T any](ctx context.Context, p *Protocol, call *Call, j journal.Journal, holder string, until time.Time, op Op[T], win *Window, kind string, log *slog.Logger) (*T, error) {
	key := call.Key
	stop, held := renewHold(ctx, call.Hold, until, j, key, holder, log)
	defer stop()
	c := *call
	c.held = held
	var row *T
	var err error
	var unsure *Uncertain
	if win != nil {
		row, err = Search(ctx, p, op, *win)
		if err != nil { // the hold lapses: the next call searches again
			err = uncertain(ctx, op.What(), win.Start, call.Clock.Now(), err, *win)
		}
	}
	switch {
	case row != nil || err != nil:
	case win != nil && !held():
		// Lost during the search: the caller that took the key searches
		// and sends; sending too could charge twice.
		err = fmt.Errorf("mediagen: the hold of idempotency key %q lapsed or was taken over while searching for what its last holder sent; the %s was not sent", key, op.What())
	default:
		row, err = submit(ctx, p, &c, op)
	}
	switch {
	case err == nil:
		// Unrecorded, the key stays held; once it lapses, the next call finds
		// this row by searching rather than sending again.
		if serr := j.Settle(context.WithoutCancel(ctx), key, holder, op.ID(row)); serr != nil {
			log.WarnContext(ctx, "mediagen: journal: could not record the id; the next call with the key will search for it",
				slog.String("id", op.ID(row)), slog.String("error", serr.Error()))
			p.unsettled.Store(key, op.ID(row))
		}
		if kind != "generation" {
			// A clone has no outputs to save: nothing to resume.
			_ = j.Mark(context.WithoutCancel(ctx), key, true, true)
		}
		p.cleanJournal(ctx, j, log)
		return row, nil
	case errors.As(err, &unsure):
		// It may have charged; the search's error (a 429, a refused
		// connection) must not read as the create's: the key stays held.
		unsure.Found.key = key
	case p.errs.Refused(err), p.errs.Unsent(err):
		// Nothing was charged: the next call need not wait out the hold and
		// search.
		if rerr := j.Release(context.WithoutCancel(ctx), key, holder); rerr != nil {
			log.WarnContext(ctx, "mediagen: journal: could not free the key of a call that charged nothing", slog.String("error", rerr.Error()))
		}
	}
	return nil, err
}

// settleFound hands a taken-over key the row this client got for it but
// could not record, and records it.
func settleFound[T any](ctx context.Context, p *Protocol, j journal.Journal, key, holder, id string, op Op[T], log *slog.Logger) (*T, error) {
	if err := j.Settle(context.WithoutCancel(ctx), key, holder, id); err != nil {
		log.WarnContext(ctx, "mediagen: journal: could not record the id", slog.String("id", id), slog.String("error", err.Error()))
	} else {
		p.unsettled.CompareAndDelete(key, id)
	}
	return op.Get(ctx, id)
}

// renewHold renews the hold (recorded until first, not from now: the
// journal may have been slow) every third of it, on the wall clock, until
// stop. held reports whether the hold is surely still the holder's (never
// found taken, a third of it left since the last renewal), so a caller
// whose renewals fail stops sending before another may take the key over.
func renewHold(ctx context.Context, hold time.Duration, first time.Time, j journal.Journal, key, holder string, log *slog.Logger) (stop func(), held func() bool) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var until atomic.Int64 // unix ns the hold surely lasts to
	var lost atomic.Bool
	until.Store(first.UnixNano())
	wg.Go(func() {
		t := time.NewTicker(hold / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			next := time.Now().Add(hold)
			ok, err := j.Renew(context.WithoutCancel(ctx), key, holder, next)
			switch {
			case err == nil && ok:
				until.Store(next.UnixNano())
			case err == nil:
				lost.Store(true)
				fallthrough
			default:
				log.WarnContext(ctx, "mediagen: journal: could not renew the hold", slog.Bool("held", ok), slog.Any("error", err))
			}
		}
	})
	stop = func() {
		close(done)
		wg.Wait()
	}
	held = func() bool {
		return !lost.Load() && time.Now().Add(hold/3).UnixNano() < until.Load()
	}
	return stop, held
}

// cleanupEvery is how often a client deletes the journal's old records.
const cleanupEvery = time.Hour

// cleanJournal deletes the records older than journal.Retention, at most
// once per cleanupEvery, so the table stays small without a scheduled job.
func (p *Protocol) cleanJournal(ctx context.Context, j journal.Journal, log *slog.Logger) {
	now := time.Now()
	last := p.lastCleanup.Load()
	if now.UnixNano()-last < int64(cleanupEvery) || !p.lastCleanup.CompareAndSwap(last, now.UnixNano()) {
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
