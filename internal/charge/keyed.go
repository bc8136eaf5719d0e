package charge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/retry"
	"github.com/mediagen/mediagen-go/internal/telemetry"
)

// ErrMismatch is the error of a call whose idempotency key was already used
// with other arguments. Nothing was sent.
var ErrMismatch = errors.New("mediagen: idempotency key already used with other arguments")

// submitKeyed runs the journal protocol of an idempotency key around
// submit. Nothing is sent until the key is recorded as held by this call:
//
//   - a key that holds an id returns that row, read afresh, and charges
//     nothing;
//   - a key held by a live caller is waited for;
//   - a key whose holder stopped renewing it (it died) is taken over, and
//     what the holder may have sent is searched for before anything is sent;
//   - the key with another fingerprint fails with [ErrMismatch];
//   - a call the service refused frees the key.
func submitKeyed[T any](ctx context.Context, p *Protocol, call *Call, op Op[T], rec journal.Record) (*T, error) {
	j, key := call.Journal, call.Key
	// Each call holds in its own name, so two goroutines of this client
	// racing on a key are told apart as two processes are.
	holder := p.holder + "/" + strconv.FormatUint(p.calls.Add(1), 10)
	log := call.Logger.With(slog.String("idempotency_key", key))
	for n := 0; ; n++ {
		// A hold is a lease between processes, on the wall clock: a test
		// clock, which waits move forward, must not lapse a live holder.
		// Started bounds a search, so it is on the client's clock, the one
		// its searches compare with the service's.
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
			// The search window keeps the key's first start: every earlier
			// holder's send, not only the last one's, must stay findable.
			took, err := j.Take(ctx, key, got, holder, now.Add(call.Hold), got.Started)
			if err != nil {
				return nil, fmt.Errorf("mediagen: journal: taking over a lapsed key: %w", err)
			}
			if !took {
				continue // another caller took it first: wait for that one
			}
			log.DebugContext(ctx, "mediagen: took over a key whose holder stopped; searching for what it sent", slog.String("holder", got.Holder))
			// The margin learned for the service's clocks, as after an
			// ambiguous failure, and clockSkew more: Started is on the dead
			// holder's clock, maybe another machine's.
			win = &Window{Start: got.Started, Margin: p.lag.margin() + clockSkew}
		}
		return sendKeyed(ctx, p, call, j, holder, op, win, rec.Op, log)
	}
}

// sendKeyed runs the call as the key's holder: it first searches for what a
// dead holder sent (win), renews the hold while it works, and records the
// outcome.
func sendKeyed[T any](ctx context.Context, p *Protocol, call *Call, j journal.Journal, holder string, op Op[T], win *Window, kind string, log *slog.Logger) (*T, error) {
	key := call.Key
	stop, held := renewHold(ctx, call.Hold, j, key, holder, log)
	defer stop()
	c := *call
	c.held = held
	var row *T
	var err error
	if win != nil {
		row, err = Search(ctx, p, op, *win)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, newUncertain(op.What(), win.Start, call.Clock.Now(), err, *win) // the hold lapses: the next call searches again
		}
	}
	if row == nil {
		row, err = submit(ctx, p, &c, op)
	}
	switch {
	case err == nil:
		// A failure to record leaves the key held; once the hold lapses,
		// the next call finds this row by searching, so it is not sent twice.
		if serr := j.Settle(context.WithoutCancel(ctx), key, holder, op.ID(row)); serr != nil {
			log.WarnContext(ctx, "mediagen: journal: could not record the id; the next call with the key will search for it",
				slog.String("id", op.ID(row)), slog.String("error", serr.Error()))
		}
		if kind != "generation" {
			// A clone has no outputs to save: nothing to resume.
			_ = j.Mark(context.WithoutCancel(ctx), key, true, true)
		}
		p.cleanJournal(ctx, j, log)
		return row, nil
	case p.errs.Refused(err), p.errs.Unsent(err):
		// Nothing was charged, so the next call with the key need not wait
		// out the hold and search: its key is freed.
		if rerr := j.Release(context.WithoutCancel(ctx), key, holder); rerr != nil {
			log.WarnContext(ctx, "mediagen: journal: could not free the key of a call that charged nothing", slog.String("error", rerr.Error()))
		}
	}
	return nil, err
}

// renewHold renews the hold every third of it, on the wall clock, until
// stop is called. held reports whether the hold is surely still this
// holder's: no renewal found it taken, and a third of it is left since the
// last that went through, so a caller whose renewals fail (a journal that
// stopped answering) stops sending before another may take the key over.
func renewHold(ctx context.Context, hold time.Duration, j journal.Journal, key, holder string, log *slog.Logger) (stop func(), held func() bool) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	var until atomic.Int64 // unix ns the hold surely lasts to
	var lost atomic.Bool
	until.Store(time.Now().Add(hold).UnixNano())
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
	}()
	stop = func() {
		close(done)
		<-stopped
	}
	held = func() bool {
		return !lost.Load() && time.Now().Add(hold/3).UnixNano() < until.Load()
	}
	return stop, held
}

// cleanupEvery is how often a client deletes the journal's old records.
const cleanupEvery = time.Hour

// cleanJournal deletes, at most once per cleanupEvery for this client,
// the records older than journal.Retention, so the table stays small
// without a scheduled job. A failure only logs.
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
