package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/engine"
	"github.com/mediagen/mediagen-go/internal/retry"
)

// clockSkew is how far the service's clock may run behind the time the
// client derives from the service's Date header (whole seconds) when it
// bounds the search for a generation an attempt may have created.
const clockSkew = 3 * time.Second

// maxClaims bounds the memory of handed-out ids. An id forgotten this way is
// old enough that the time bound of a search excludes it anyway.
const maxClaims = 50_000

// claims remembers which generations and clones this Client has handed to a
// caller, so that a search after an ambiguous failure never hands the same
// one to two callers.
type claims struct {
	mu    sync.Mutex
	byID  map[string]claim
	order []string // oldest first, for eviction
}

// claim records how an id was handed out. An id found by a search may
// belong to another caller whose answer is still on its way; that caller
// then searches from bound, where the searcher's own creation must lie.
type claim struct {
	bound time.Time // zero unless found by a search
}

func newClaims() *claims {
	return &claims{byID: map[string]claim{}}
}

// take claims id; false when it was claimed before, with that claim.
func (cs *claims) take(id string, cl claim) (claim, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.takeLocked(id, cl)
}

func (cs *claims) takeLocked(id string, cl claim) (claim, bool) {
	if prev, ok := cs.byID[id]; ok {
		return prev, false
	}
	cs.byID[id] = cl
	cs.order = append(cs.order, id)
	if len(cs.order) > maxClaims {
		delete(cs.byID, cs.order[0])
		cs.order = cs.order[1:]
	}
	return cl, true
}

// takeFirst claims the first candidate not yet claimed; candidates come
// oldest first, so a search prefers the row nearest its own attempt over
// rows of calls that started later.
func (cs *claims) takeFirst(ids []string, cl claim) (string, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, id := range ids {
		if _, ok := cs.takeLocked(id, cl); ok {
			return id, true
		}
	}
	return "", false
}

// searchLocks serializes the searches of each key; waiting honours the
// context. Searches of different keys never wait for each other, so they
// can share one listing ([Client.findGenerations]).
type searchLocks struct {
	mu sync.Mutex
	m  map[string]*searchLock
}

// searchLock is one key's lock and how many searches hold or want it.
type searchLock struct {
	sem  chan struct{}
	refs int
}

func newSearchLocks() *searchLocks {
	return &searchLocks{m: map[string]*searchLock{}}
}

func (l *searchLocks) lock(ctx context.Context, key string) (func(), error) {
	l.mu.Lock()
	sl := l.m[key]
	if sl == nil {
		sl = &searchLock{sem: make(chan struct{}, 1)}
		l.m[key] = sl
	}
	sl.refs++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if sl.refs--; sl.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
	select {
	case sl.sem <- struct{}{}:
		return func() { <-sl.sem; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// charge describes one request that charges the balance, for [submit].
type charge[T any] struct {
	key   func() string                                                // identifies the rows that are interchangeable: same feature and arguments; built only by a search
	what  string                                                       // "generation" or "voice clone", for logs
	post  func(context.Context) (*T, error)                            // sends the request once (429s aside); a 2xx without an id is a *bodyError
	id    func(*T) string                                              // id of a created row
	find  func(context.Context, searchWindow) ([]*T, time.Time, error) // matching rows since the window's start, oldest first, and the bound used
	blame func(*UncertainError)                                        // fills in what the caller needs to finish the search
}

// searchWindow is where a search looks: rows requested after the attempt
// began, at local time start, or, when floor is set, after floor on the
// service's clock.
type searchWindow struct {
	start time.Time
	floor time.Time
}

// bound converts the window to the service's clock. serverNow is the Date
// of an answer received at local time received; without one the local
// clock is taken as the service's.
func (w searchWindow) bound(serverNow, received time.Time) time.Time {
	if !w.floor.IsZero() {
		return w.floor
	}
	if serverNow.IsZero() {
		return w.start.Add(-clockSkew)
	}
	return serverNow.Add(-received.Sub(w.start)).Add(-clockSkew)
}

// SearchBudget is how long the search after an ambiguous failure keeps
// trying while the service fails, whatever the caller's retry policy: the
// search only reads, so patience costs nothing, while giving up leaves the
// caller not knowing whether it was charged. The context still bounds it.
const SearchBudget = 5 * time.Minute

// Backoff of the search's own retries; a Retry-After wins when longer.
const (
	searchWaitMin = 250 * time.Millisecond
	searchWaitMax = 5 * time.Second
)

// submit runs a charging request so that it charges at most once per row
// handed back: after an ambiguous failure it waits a backoff, searches for
// the row the attempt may have created, claims and returns it, and resends
// only when there is none, at most MaxRetries times.
func submit[T any](ctx context.Context, c *Client, cfg *config, ch charge[T]) (*T, error) {
	// Only failures are logged: no logger is derived on the way to success.
	log := cfg.s.logger
	what := slog.String("what", ch.what)
	for attempt := 0; ; attempt++ {
		start := cfg.s.clock.Now()
		row, err := ch.post(ctx)
		var win searchWindow
		switch {
		case err == nil:
			prev, ok := c.claims.take(ch.id(row), claim{})
			if ok {
				return row, nil
			}
			// Another caller's search took our row while our answer was on
			// its way; the row its own attempt created is ours to find.
			log.DebugContext(ctx, "mediagen: created row already claimed by a search; searching for the one it left",
				what, slog.String("id", ch.id(row)))
			win = searchWindow{start: start, floor: prev.bound}
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case !ambiguous(err):
			return nil, err
		default:
			log.DebugContext(ctx, "mediagen: ambiguous failure; searching for a row the attempt may have created",
				what, slog.String("error", err.Error()))
			win = searchWindow{start: start}
		}
		// A gateway can give up (504, a reset) while the service is still
		// storing what it accepted; the backoff is spent before looking,
		// not before resubmitting, so a row on its way has time to show.
		if err := cfg.s.clock.Sleep(ctx, retry.Backoff(cfg.s.retry.WaitMin, cfg.s.retry.WaitMax, attempt)); err != nil {
			return nil, err
		}
		found, ferr := search(ctx, c, ch, win)
		if ferr != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			ue := &UncertainError{Op: ch.what, Start: start, End: cfg.s.clock.Now(), Err: errors.Join(err, ferr), win: win, found: newFinding()}
			ch.blame(ue)
			return nil, ue
		}
		if found != nil {
			log.DebugContext(ctx, "mediagen: found and claimed the row of an earlier attempt", what, slog.String("id", ch.id(found)))
			return found, nil
		}
		if attempt >= cfg.s.retry.MaxRetries {
			if err == nil {
				err = fmt.Errorf("mediagen: the %s this call created went to a concurrent call with the same arguments, and no retry is left to submit again", ch.what)
			}
			return nil, err
		}
		log.DebugContext(ctx, "mediagen: no row found; submitting again", what, slog.Int("attempt", attempt+2))
	}
}

// search claims the first unclaimed row the attempt may have created.
// Its listings have the search's own patience ([SearchBudget]), through
// the engine's one retry loop.
func search[T any](ctx context.Context, c *Client, ch charge[T], win searchWindow) (*T, error) {
	return claimFound(ctx, c, ch, win)
}

// searchConfig returns cfg with the search's patience: retries of its
// listings are bounded by [SearchBudget], not by the caller's policy, and
// any Retry-After is waited out.
func (c *Client) searchConfig(cfg *config) *config {
	if cfg == c.base && c.search != nil {
		return c.search
	}
	sc := *cfg
	sc.call.Retry = retry.Policy{MaxRetries: -1, WaitMin: searchWaitMin, WaitMax: searchWaitMax, Budget: SearchBudget, Patient: true}
	return &sc
}

// claimFound searches and claims the first unclaimed match. Searches for the
// same key run one at a time: a search claims from the rows it listed, and
// a concurrent search could otherwise take this caller's row while leaving
// its own, created after this listing, out of sight.
func claimFound[T any](ctx context.Context, c *Client, ch charge[T], win searchWindow) (*T, error) {
	unlock, err := c.searches.lock(ctx, ch.key())
	if err != nil {
		return nil, err
	}
	defer unlock()
	rows, bound, err := ch.find(ctx, win)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = ch.id(r)
	}
	id, ok := c.claims.takeFirst(ids, claim{bound: bound})
	if !ok {
		return nil, nil
	}
	for _, r := range rows {
		if ch.id(r) == id {
			return r, nil
		}
	}
	return nil, nil
}

// ambiguous reports whether a failed charging request may have been
// accepted: the connection broke after the request may have been sent, the service
// or a proxy answered 5xx, or a 2xx answer could not be read.
func ambiguous(err error) bool {
	var se *engine.SendError
	if errors.As(err, &se) {
		return se.MaybeSent
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode >= 500
	}
	var be *bodyError
	return errors.As(err, &be)
}

// serverDate reads the Date header of an answer.
func serverDate(resp *http.Response) time.Time {
	if resp == nil {
		return time.Time{}
	}
	t, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return time.Time{}
	}
	return t
}

// UncertainError is returned when a charging request failed ambiguously and
// the search for what it may have created did not finish: the service kept
// failing for [SearchBudget]. The call may or may not have been charged.
// Finish the search with [Client.FindGeneration] or [Client.FindVoiceClone]
// before submitting again: it returns what the call created, or nil when it
// created nothing and submitting again is safe.
type UncertainError struct {
	Op         string            // "generation" or "voice clone"
	Args       Args              // the generation's arguments (Op "generation")
	Clone      *CloneVoiceParams // the clone's inputs (Op "voice clone")
	Start, End time.Time         // the attempt began at Start; the search gave up at End
	Err        error             // the request's failure and the search's

	win   searchWindow
	found *finding // what a Find call claimed, shared by copies of the error
}

// finding remembers the id a Find call claimed for an UncertainError, so
// that calling Find again returns it rather than nil (which would read as
// "nothing was created"), and runs Find calls on one error one at a time.
type finding struct {
	turn chan struct{}
	id   string // guarded by turn
}

func newFinding() *finding { return &finding{turn: make(chan struct{}, 1)} }

// finishSearch runs the search of e once per error: with the claimed id when an
// earlier call found it, get reads that row again; otherwise search runs,
// and an id it returns is remembered.
func finishSearch[T any](ctx context.Context, e *UncertainError, id func(*T) string, get func(string) (*T, error), search func() (*T, error)) (*T, error) {
	f := e.found
	if f == nil { // an error built by hand: nothing to remember
		return search()
	}
	select {
	case f.turn <- struct{}{}:
		defer func() { <-f.turn }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if f.id != "" {
		return get(f.id)
	}
	row, err := search()
	if row != nil {
		f.id = id(row)
	}
	return row, err
}

// Error describes both failures.
func (e *UncertainError) Error() string {
	return "mediagen: " + e.Op + " may have been created and charged; the search for it did not finish (finish it with FindGeneration or FindVoiceClone): " + e.Err.Error()
}

// Unwrap returns the underlying failures.
func (e *UncertainError) Unwrap() error { return e.Err }

// FindGeneration finishes the search an [*UncertainError] of
// [Client.CreateGeneration] left open, with the same patience: it returns
// the generation the failed call created, claimed for this caller, or nil
// and no error when the call created nothing, so that submitting again
// charges once. Calling it again with the same e returns that generation
// again, read afresh. Use the Client that returned e.
func (c *Client) FindGeneration(ctx context.Context, e *UncertainError, opts ...Option) (*mediagen.Generation, error) {
	if e == nil || e.Args == nil {
		return nil, fmt.Errorf("%w: FindGeneration needs the *UncertainError of a CreateGeneration", ErrInvalidArgument)
	}
	a, err := encodeArgs(e.Args)
	if err != nil {
		return nil, err
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
	return finishSearch(ctx, e, func(g *mediagen.Generation) string { return g.ID },
		func(id string) (*mediagen.Generation, error) { return c.getGeneration(ctx, cfg, id) },
		func() (*mediagen.Generation, error) {
			return search(ctx, c, c.generationCharge(cfg, a, nil), e.win)
		})
}

// FindVoiceClone is [Client.FindGeneration] for an [*UncertainError] of
// [Client.CloneVoice].
func (c *Client) FindVoiceClone(ctx context.Context, e *UncertainError, opts ...Option) (*mediagen.Voice, error) {
	if e == nil || e.Clone == nil {
		return nil, fmt.Errorf("%w: FindVoiceClone needs the *UncertainError of a CloneVoice", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
	return finishSearch(ctx, e, func(v *mediagen.Voice) string { return v.ID },
		func(id string) (*mediagen.Voice, error) { return c.getVoice(ctx, cfg, id) },
		func() (*mediagen.Voice, error) { return search(ctx, c, c.cloneCharge(cfg, *e.Clone, nil), e.win) })
}
