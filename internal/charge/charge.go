// Package charge is the SDK's charging protocol: when a request that
// charges the balance (a generation, a voice clone) is sent, sent again,
// searched for after an ambiguous failure, waited for while another caller
// holds its idempotency key, and recorded in the journal.
//
// The rule: a call charges at most once per row it hands back. After an
// ambiguous failure the protocol searches for the row the attempt may have
// created, claims it so that no other caller of the same [Protocol] gets
// it, and submits again only when there is none. With an idempotency key
// the journal extends that across processes.
package charge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/retry"
	"github.com/mediagen/mediagen-go/internal/telemetry"
)

// Op is one charging call, as the client describes it.
type Op[T any] interface {
	// What names the call in logs and errors: "generation", "voice clone".
	What() string
	// Post sends the request once (429s aside): a row and the Date of the
	// answer (zero when it had none), or an error.
	Post(ctx context.Context) (*T, time.Time, error)
	// ID returns a row's id.
	ID(row *T) string
	// Requested returns when the service recorded a row's request, on its
	// clock; zero when the row does not say.
	Requested(row *T) time.Time
	// Key identifies the rows that are interchangeable: same feature and
	// arguments. Built only by a search.
	Key() string
	// Find returns the matching rows requested inside win, oldest first,
	// and the bound it used on the service's clock.
	Find(ctx context.Context, win Window) ([]*T, time.Time, error)
	// Get reads a recorded row afresh.
	Get(ctx context.Context, id string) (*T, error)
}

// Call is what the protocol reads of the call's settings.
type Call struct {
	Clock  retry.Clock
	Logger *slog.Logger
	// Retry bounds how often the call submits again after a search found
	// nothing, and paces those searches.
	Retry retry.Policy
	// Key is the idempotency key, "" for none; Journal and Hold serve it.
	Key     string
	Journal journal.Journal
	Hold    time.Duration

	held func() bool // whether the key's hold is still the call's; nil without a key
}

// Errors is how the protocol reads the client's errors.
type Errors struct {
	// Ambiguous: the failed request may have been accepted.
	Ambiguous func(error) bool
	// Refused: the service refused the call and charged nothing.
	Refused func(error) bool
	// NotFound: the row is gone (expired or deleted).
	NotFound func(error) bool
	// Unsent: the request surely never reached the service (a
	// connection refused).
	Unsent func(error) bool
	// RetryAfter: how long the failure asked the caller to wait, 0 for
	// no ask.
	RetryAfter func(error) time.Duration
}

// Protocol is one client's charging state: the rows it handed out, its
// searches, its name in the journal. It is safe for concurrent use.
type Protocol struct {
	errs        Errors
	claims      *claims
	lag         lag
	locks       *searchLocks
	holder      string        // names this client in the journal
	calls       atomic.Uint64 // numbers its keyed calls
	lastCleanup atomic.Int64  // unix ns of its last journal cleanup
}

// New returns a protocol that reads errors with errs.
func New(errs Errors) *Protocol {
	return &Protocol{errs: errs, claims: newClaims(), locks: newSearchLocks(), holder: newHolder()}
}

// newHolder names a client in the records it holds: host, process and a
// random part, so two clients of one process are told apart.
func newHolder() string {
	host, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Submit runs op so that it charges at most once per row it hands back,
// through the journal when call.Key is set.
func Submit[T any](ctx context.Context, p *Protocol, call *Call, op Op[T], rec journal.Record) (*T, error) {
	if call.Key != "" {
		return submitKeyed(ctx, p, call, op, rec)
	}
	return submit(ctx, p, call, op)
}

// submit sends op; after an ambiguous failure it waits a backoff, searches
// for the row the attempt may have created, claims and returns it, and
// sends again only when there is none, at most call.Retry.MaxRetries times.
func submit[T any](ctx context.Context, p *Protocol, call *Call, op Op[T]) (*T, error) {
	log := call.Logger
	for attempt := 0; ; attempt++ {
		start, began := call.Clock.Now(), time.Now()
		row, date, err := op.Post(ctx)
		var win Window
		switch {
		case err == nil:
			p.lag.observe(op.What(), start, call.Clock.Now(), date, op.Requested(row))
			prev, ok := p.claims.take(op.ID(row))
			if ok {
				return row, nil
			}
			// Another caller's search took our row while our answer was on
			// its way; the row its own attempt created is ours to find.
			log.DebugContext(ctx, "mediagen: created row already claimed by a search; searching for the one it left",
				slog.String("what", op.What()), slog.String("id", op.ID(row)))
			win = Window{Start: start, Floor: prev.bound}
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case !p.errs.Ambiguous(err):
			return nil, err
		default:
			log.DebugContext(ctx, "mediagen: ambiguous failure; searching for a row the attempt may have created",
				slog.String("what", op.What()), slog.String("error", err.Error()))
			win = Window{Start: start, Margin: p.lag.margin(), Earliest: p.lag.earliest(op.What(), start, began)}
		}
		// A gateway can give up (504, a reset) while the service is still
		// storing what it accepted; the backoff is spent before looking,
		// not before resubmitting, so a row on its way has time to show.
		// A Retry-After (a 503 under load) is honoured by the search too.
		wait := retry.Backoff(call.Retry.WaitMin, call.Retry.WaitMax, attempt)
		if err != nil {
			wait = max(wait, p.errs.RetryAfter(err))
		}
		if err := call.Clock.Sleep(ctx, wait); err != nil {
			return nil, err
		}
		found, ferr := Search(ctx, p, op, win)
		if ferr != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, newUncertain(op.What(), start, call.Clock.Now(), errors.Join(err, ferr), win)
		}
		if found != nil {
			log.DebugContext(ctx, "mediagen: found and claimed the row of an earlier attempt",
				slog.String("what", op.What()), slog.String("id", op.ID(found)))
			return found, nil
		}
		if attempt >= call.Retry.MaxRetries {
			if err == nil {
				err = fmt.Errorf("mediagen: the %s this call created went to a concurrent call with the same arguments, and no retry is left to submit again", op.What())
			}
			return nil, err
		}
		if call.held != nil && !call.held() {
			if err == nil {
				err = errors.New("the row it created went to a concurrent call")
			}
			// Another caller may have taken the key over and be sending:
			// sending too could charge twice. The next call with the key
			// searches for what was sent.
			return nil, fmt.Errorf("mediagen: the hold of idempotency key %q lapsed or was taken over while the %s was retried; not sent again: %w", call.Key, op.What(), err)
		}
		log.DebugContext(ctx, "mediagen: no row found; submitting again", slog.String("what", op.What()), slog.Int("attempt", attempt+2))
	}
}

// Search claims the first unclaimed row op's search finds in win: the row
// an ambiguous attempt created, or nil when it created none. Searches for
// one key run one at a time: a concurrent one could otherwise take this
// caller's row while its own, created after this listing, is out of sight.
func Search[T any](ctx context.Context, p *Protocol, op Op[T], win Window) (row *T, err error) {
	ctx, span := telemetry.StartSearch(ctx)
	defer func() { span.EndSearch(row != nil, err) }()
	unlock, err := p.locks.lock(ctx, op.Key())
	if err != nil {
		return nil, err
	}
	defer unlock()
	rows, bound, err := op.Find(ctx, win)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = op.ID(r)
	}
	id, ok := p.claims.takeFirst(ids, claim{bound: bound})
	if !ok {
		return nil, nil
	}
	for _, r := range rows {
		if op.ID(r) == id {
			return r, nil
		}
	}
	return nil, nil
}

// clockSkew is how far the clock that stamps rows may run behind the
// service's Date header, or the service's clock behind the client's when
// an answer has no Date, until the client has seen enough rows to know
// ([lag]).
const clockSkew = 3 * time.Second

// Window is where a search looks: rows requested after the attempt began,
// at local time Start, or, when Floor is set, after Floor on the service's
// clock.
type Window struct {
	Start time.Time
	Floor time.Time
	// Margin is how far the clock that stamps rows may run behind the
	// service's Date header; 0 means clockSkew.
	Margin time.Duration
	// Earliest, when set, is a bound the client's recent rows give
	// ([lag.earliest]); the later of it and the Date's is used.
	Earliest time.Time
}

// Bound converts the window to the service's clock. serverNow is the Date
// of an answer received at local time received; without one the local
// clock is taken as the service's.
func (w Window) Bound(serverNow, received time.Time) time.Time {
	if !w.Floor.IsZero() {
		return w.Floor
	}
	b := w.Start.Add(-clockSkew)
	if !serverNow.IsZero() {
		margin := w.Margin
		if margin == 0 {
			margin = clockSkew
		}
		b = serverNow.Add(-received.Sub(w.Start)).Add(-margin)
	}
	if w.Earliest.After(b) {
		return w.Earliest
	}
	return b
}
