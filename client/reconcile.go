package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/charge"
	"github.com/mediagen/mediagen-go/internal/engine"
	"github.com/mediagen/mediagen-go/internal/retry"
)

// SearchBudget is how long the search after an ambiguous failure keeps trying while the service fails,
// whatever the retry policy: it only reads, while giving up leaves the caller unsure it was charged.
const SearchBudget = 5 * time.Minute

// Backoff of the search's own retries; a Retry-After wins when longer.
const (
	searchWaitMin = 250 * time.Millisecond
	searchWaitMax = 5 * time.Second
)

// chargeErrors is how the protocol reads the client's errors.
var chargeErrors = charge.Errors{
	Ambiguous: ambiguous,
	Refused:   refusedByService,
	NotFound:  func(err error) bool { return errors.Is(err, ErrNotFound) },
	Unsent: func(err error) bool {
		var se *engine.SendError
		return errors.As(err, &se) && !se.MaybeSent
	},
	// The search waits out a Retry-After, within its budget.
	RetryAfter: func(err error) time.Duration {
		var e *APIError
		if errors.As(err, &e) {
			return min(e.RetryAfter, SearchBudget)
		}
		return 0
	},
}

// searchConfig returns cfg with the search's patience, [SearchBudget], in place of the caller's policy.
func (c *Client) searchConfig(cfg *config) *config {
	if cfg == c.base && c.search != nil {
		return c.search
	}
	sc := *cfg
	sc.call.Retry = retry.Policy{MaxRetries: -1, WaitMin: searchWaitMin, WaitMax: searchWaitMax, Budget: SearchBudget, Patient: true}
	return &sc
}

// ambiguous reports whether a failed charging request may have been accepted: the connection broke
// after it may have been sent, a 5xx, a 303 (which answers a POST processed), or a 2xx answer that could
// not be read.
func ambiguous(err error) bool {
	var se *engine.SendError
	if errors.As(err, &se) {
		return se.MaybeSent
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode >= 500 || apiErr.StatusCode == http.StatusSeeOther
	}
	var be *bodyError
	return errors.As(err, &be)
}

// refusedByService reports whether the service refused the call, charging nothing (401: no project to
// charge; 429: outlasting retries).
func refusedByService(err error) bool {
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		return errors.Is(err, ErrInvalidArgument)
	}
	return slices.Contains([]int{400, 401, 402, 403, 429}, apiErr.StatusCode)
}

// serverDate reads the Date header of an answer.
func serverDate(resp *http.Response) time.Time {
	if resp == nil {
		return time.Time{}
	}
	s := resp.Header.Get("Date")
	if s == "" {
		return time.Time{} // not parsed: each failed format allocates an error
	}
	if d := lastDate.Load(); d != nil && d.s == s {
		return d.t
	}
	t, _ := http.ParseTime(s)
	lastDate.Store(&parsedDate{s: s, t: t})
	return t
}

// lastDate is the last Date parsed: answers of one second share it.
var lastDate atomic.Pointer[parsedDate]

type parsedDate struct {
	s string
	t time.Time
}

// UncertainError is a charging request that failed ambiguously and whose search for what it may have
// created and charged did not finish: the service kept failing for [SearchBudget]. Finish the search with
// [Client.FindGeneration] or [Client.FindVoiceClone] before submitting again.
type UncertainError struct {
	Op         string            // "generation" or "voice clone"
	Args       Args              // the generation's arguments (Op "generation")
	Clone      *CloneVoiceParams // the clone's inputs (Op "voice clone")
	Start, End time.Time         // the attempt began at Start; the search gave up at End
	Err        error             // the request's failure and the search's

	win   charge.Window
	found *charge.Finding // what a Find call claimed, shared by copies of the error
}

// uncertain turns the protocol's uncertain outcome into an [*UncertainError] that blame completes.
func uncertain(err error, blame func(*UncertainError)) error {
	u, ok := err.(*charge.Uncertain)
	if !ok {
		return err
	}
	e := &UncertainError{Op: u.What, Start: u.Start, End: u.End, Err: u.Err, win: u.Window, found: u.Found}
	blame(e)
	return e
}

// Error describes both failures.
func (e *UncertainError) Error() string {
	return "mediagen: " + e.Op + " may have been created and charged; the search for it did not finish (finish it with FindGeneration or FindVoiceClone): " + e.Err.Error()
}

// Unwrap returns the underlying failures.
func (e *UncertainError) Unwrap() error { return e.Err }

// FindGeneration finishes the search an [*UncertainError] of [Client.CreateGeneration] left open: it
// returns the generation the call created (again, read afresh, for the same e), or nil and no error when
// it created nothing and submitting again is safe. Use the Client that returned e.
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
	op := &generationOp{c: c, cfg: cfg, args: a}
	return charge.Finish(ctx, c.proto, e.found, op, e.win)
}

// FindVoiceClone is [Client.FindGeneration] for an [*UncertainError] of [Client.CloneVoice].
func (c *Client) FindVoiceClone(ctx context.Context, e *UncertainError, opts ...Option) (*mediagen.Voice, error) {
	if e == nil || e.Clone == nil {
		return nil, fmt.Errorf("%w: FindVoiceClone needs the *UncertainError of a CloneVoice", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
	op := &cloneOp{c: c, cfg: cfg, p: *e.Clone}
	return charge.Finish(ctx, c.proto, e.found, op, e.win)
}

// findGenerations returns the generations of feature with params want requested in win, and the bound used.
func (c *Client) findGenerations(ctx context.Context, cfg *config, feature mediagen.Feature, want map[string]any, win charge.Window) ([]*mediagen.Generation, time.Time, error) {
	key, err := json.Marshal(want)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("mediagen: search: %w", err)
	}
	shared := c.sharesListing(cfg)
	if shared {
		cfg = c.search
	}
	src := &generationSource{c: c, cfg: cfg, feature: feature}
	return c.listing.Find(ctx, string(feature), src, string(key), win, shared)
}

// generationSource pages the generations of one feature for a search.
type generationSource struct {
	c       *Client
	cfg     *config
	feature mediagen.Feature
}

func (s *generationSource) Page(ctx context.Context, cursor string) ([]*mediagen.Generation, string, time.Time, error) {
	pg, resp, err := s.c.listGenerations(ctx, s.cfg, ListParams{Feature: s.feature, Limit: maxPageSize, Cursor: cursor})
	if err != nil {
		return nil, "", time.Time{}, err
	}
	return pg.Generations, pg.NextCursor, serverDate(resp), nil
}

func (s *generationSource) Requested(g *mediagen.Generation) time.Time { return g.RequestDate }

// Key is the row's params as canonical JSON, if the row echoes the feature as the call spelled it.
func (s *generationSource) Key(g *mediagen.Generation) (string, bool) {
	if g.Feature != s.feature {
		return "", false
	}
	b, err := json.Marshal(map[string]any(g.Params))
	return string(b), err == nil
}

func (s *generationSource) Clock() retry.Clock   { return s.cfg.call.Clock }
func (s *generationSource) Logger() *slog.Logger { return s.cfg.call.Logger }

// sharesListing reports whether a call's list requests are the client's own, so another's listing serves it.
func (c *Client) sharesListing(cfg *config) bool {
	b := c.search
	return cfg == b || (cfg.s.responseInto == nil && len(cfg.s.middleware) == len(b.s.middleware) &&
		reflect.ValueOf(cfg.s.header).UnsafePointer() == reflect.ValueOf(b.s.header).UnsafePointer() &&
		sameClock(cfg.s.clock, b.s.clock))
}

// sameClock compares two clocks without panicking on an incomparable one.
func sameClock(a, b Clock) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}
