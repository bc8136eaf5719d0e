// Package charge is the SDK's charging protocol for requests that charge
// the balance (a generation, a voice clone): a call charges at most once per
// row it hands back. After an ambiguous failure it searches for the row the
// attempt may have created, claims it so no other caller of the [Protocol]
// gets it, and submits again only when there is none. With an idempotency
// key the journal extends that across processes.
package charge

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/retry"
	"github.com/mediagen/mediagen-go/internal/telemetry"
)

// Op is one charging call, as the client describes it.
type Op[T any] interface {
	What() string // names the call in logs and errors: "generation"
	// Post sends the request once (429s aside): a row and the answer's
	// Date (zero for none), or an error.
	Post(ctx context.Context) (*T, time.Time, error)
	ID(row *T) string
	// Requested is when the service recorded a row's request, on its clock;
	// zero when the row does not say.
	Requested(row *T) time.Time
	// Key identifies interchangeable rows (same feature and arguments);
	// only a search builds it.
	Key() string
	// Find returns the matching rows requested inside win, oldest first,
	// and the bound it used on the service's clock.
	Find(ctx context.Context, win Window) ([]*T, time.Time, error)
	Get(ctx context.Context, id string) (*T, error) // reads a row afresh
}

// Call is what the protocol reads of the call's settings.
type Call struct {
	Clock  retry.Clock
	Logger *slog.Logger
	// Retry bounds the resubmissions after a search found nothing, and
	// paces the searches.
	Retry   retry.Policy
	Key     string // the idempotency key, "" for none; Journal and Hold serve it
	Journal journal.Journal
	Hold    time.Duration

	held func() bool // whether the key's hold is still the call's; nil without a key
}

// Errors is how the protocol reads the client's errors.
type Errors struct {
	Ambiguous  func(error) bool          // the failed request may have been accepted
	Refused    func(error) bool          // the service refused it and charged nothing
	NotFound   func(error) bool          // the row is gone (expired or deleted)
	Unsent     func(error) bool          // it surely never reached the service
	RetryAfter func(error) time.Duration // the wait the failure asked for, 0 for none
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
	// unsettled maps a key to the id this client got for it but did not
	// record (the journal failed, or FindGeneration found it): its own
	// search skips a row it handed out, so a takeover reads it here.
	unsettled sync.Map
}

// New returns a protocol that reads errors with errs.
func New(errs Errors) *Protocol {
	return &Protocol{errs: errs, claims: newClaims(), locks: newSearchLocks(), holder: newHolder()}
}

// newHolder names a client in the journal: host, process and a random
// part for two clients of one process.
func newHolder() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), rand.Text()[:10])
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
// for the row the attempt may have created and claims it, and sends again
// only when there is none, at most call.Retry.MaxRetries times.
func submit[T any](ctx context.Context, p *Protocol, call *Call, op Op[T]) (*T, error) {
	log, what := call.Logger, slog.String("what", op.What())
	for attempt := 0; ; attempt++ {
		start := call.Clock.Now()
		began := realTime(call.Clock, start)
		row, date, err := op.Post(ctx)
		var win Window
		switch {
		case err == nil:
			received := call.Clock.Now()
			p.lag.observe(op.What(), start, received, realTime(call.Clock, received), date, op.Requested(row))
			prev, ok := p.claims.take(op.ID(row))
			if ok {
				return row, nil
			}
			// A search took our row while our answer was on its way: the row
			// the searcher's attempt created is ours to find.
			log.DebugContext(ctx, "mediagen: created row already claimed by a search; searching for the one it left",
				what, slog.String("id", op.ID(row)))
			win = Window{Start: start, Floor: prev.bound}
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case !p.errs.Ambiguous(err):
			return nil, err
		default:
			log.DebugContext(ctx, "mediagen: ambiguous failure; searching for a row the attempt may have created",
				what, slog.String("error", err.Error()))
			win = Window{Start: start, Margin: p.lag.margin(), Earliest: p.lag.earliest(op.What(), start, began)}
		}
		// The backoff is spent before searching, not before resubmitting: a
		// gateway can give up (504, a reset) while the service still stores
		// the row. A Retry-After (a 503 under load) holds the search too.
		wait := retry.Backoff(call.Retry.WaitMin, call.Retry.WaitMax, attempt)
		if err != nil {
			wait = max(wait, p.errs.RetryAfter(err))
		}
		if err := call.Clock.Sleep(ctx, wait); err != nil {
			return nil, err
		}
		found, ferr := Search(ctx, p, op, win)
		if ferr != nil {
			return nil, uncertain(ctx, op.What(), start, call.Clock.Now(), errors.Join(err, ferr), win)
		}
		if found != nil {
			log.DebugContext(ctx, "mediagen: found and claimed the row of an earlier attempt",
				what, slog.String("id", op.ID(found)))
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
			// sending too could charge twice.
			return nil, fmt.Errorf("mediagen: the hold of idempotency key %q lapsed or was taken over while the %s was retried; not sent again: %w", call.Key, op.What(), err)
		}
		log.DebugContext(ctx, "mediagen: no row found; submitting again", what, slog.Int("attempt", attempt+2))
	}
}

// realTime is the real time when clock read now: now itself on the wall
// clock, not read twice.
func realTime(clock retry.Clock, now time.Time) time.Time {
	if clock == retry.Wall {
		return now
	}
	return time.Now()
}

// Search claims the first unclaimed row op's search finds in win: the row
// an ambiguous attempt created, or nil. Searches for one key run one at a
// time, or one could take another's row while its own, created after that
// listing, is out of sight.
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
	return rows[slices.Index(ids, id)], nil
}

// clockSkew is how far the clock that dates rows may run behind the Date
// header (or, without one, the client's), until [lag] knows better.
const clockSkew = 3 * time.Second

// Window is where a search looks: rows requested after local time Start
// or, when set, after Floor on the service's clock.
type Window struct {
	Start, Floor time.Time
	// Margin is how far the clock dating rows may run behind the Date
	// header; 0 means clockSkew.
	Margin time.Duration
	// Earliest, when set, is the bound of recent rows ([lag.earliest]); the
	// later of it and the Date's is used.
	Earliest time.Time
}

// Bound converts the window to the service's clock, from the Date
// serverNow of an answer received at local time received (without one,
// the local clock is the service's).
func (w Window) Bound(serverNow, received time.Time) time.Time {
	if !w.Floor.IsZero() {
		return w.Floor
	}
	b := w.Start.Add(-clockSkew)
	if !serverNow.IsZero() {
		b = serverNow.Add(-received.Sub(w.Start)).Add(-cmp.Or(w.Margin, clockSkew))
	}
	if w.Earliest.After(b) {
		return w.Earliest
	}
	return b
}
