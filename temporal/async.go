package mediagentemporal

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/webhook"
)

// Pending is what an asynchronously completing activity left for its
// Completer: its task token and what to do with the generation's output.
type Pending struct {
	Token  []byte
	Key    string
	SaveTo string
}

// TokenStore keeps the Pending of each asynchronously completing activity by
// generation id, between the worker that submitted and the webhook receiver
// that completes. Implementations must be safe for concurrent use; the
// receiver and the workers share one store (a SQLTokens on a shared database
// when they are different processes).
type TokenStore interface {
	// Put stores p for the generation id, replacing what was there (a
	// retried attempt has a new task token).
	Put(ctx context.Context, id string, p Pending) error
	// Take removes the Pending of id and returns it; false when there is
	// none. Of two callers racing, one gets it.
	Take(ctx context.Context, id string) (Pending, bool, error)
}

// MemoryTokens is a TokenStore in memory, for a worker that receives its own
// webhooks.
type MemoryTokens struct {
	mu sync.Mutex
	m  map[string]storedToken
}

// storedToken is a Pending and when it was stored, for Cleanup.
type storedToken struct {
	Pending
	at time.Time
}

// NewMemoryTokens returns an empty MemoryTokens.
func NewMemoryTokens() *MemoryTokens {
	return &MemoryTokens{m: map[string]storedToken{}}
}

// Put stores p for id.
func (s *MemoryTokens) Put(_ context.Context, id string, p Pending) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = storedToken{p, time.Now()}
	return nil
}

// Take removes and returns the Pending of id.
func (s *MemoryTokens) Take(_ context.Context, id string) (Pending, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.m[id]
	delete(s.m, id)
	return p.Pending, ok, nil
}

// Cleanup deletes the tokens stored before before, of activities that
// timed out long ago (their webhook never came), and returns how many it
// deleted, as [SQLTokens.Cleanup] does.
func (s *MemoryTokens) Cleanup(_ context.Context, before time.Time) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for id, p := range s.m {
		if p.at.Before(before) {
			delete(s.m, id)
			n++
		}
	}
	return n, nil
}

// pend records the activity's task token for generation id and returns
// activity.ErrResultPending, unless the generation has already ended: an
// event that arrived before the token was stored found nothing to complete,
// so the activity completes itself. A retry asks the service even with a
// hub: its event may have been lost, and the hub would never see it.
func (a *Activities) pend(ctx context.Context, id, key, dir string) (*Result, error) {
	info := activity.GetInfo(ctx)
	if err := a.tokens.Put(ctx, id, Pending{Token: info.TaskToken, Key: key, SaveTo: dir}); err != nil {
		return nil, err
	}
	var g *mediagen.Generation
	if a.hub != nil {
		if ev, ok := a.hub.Lookup(hub.Key{ID: id}); ok {
			g = ev.Generation
		}
	}
	if g == nil && (a.hub == nil || info.Attempt > 1 || activity.HasHeartbeatDetails(ctx)) {
		var err error
		if g, err = a.c.GetGeneration(ctx, id); errors.Is(err, client.ErrNotFound) {
			_, _, _ = a.tokens.Take(ctx, id)
			return nil, ended(&poll.GoneError{ID: id, Seen: true, Err: err})
		}
	}
	if g == nil || !g.Status.Terminal() {
		return nil, activity.ErrResultPending // a failed read too: the timeout's retry is the backstop
	}
	if _, ok, err := a.tokens.Take(ctx, id); err != nil || !ok {
		if err != nil {
			return nil, err
		}
		return nil, activity.ErrResultPending // the Completer took it and completes
	}
	return finish(ctx, a.c, g, key, dir)
}

// ActivityCompleter completes activities by task token; Temporal's
// client.Client is one.
type ActivityCompleter interface {
	CompleteActivity(ctx context.Context, taskToken []byte, result any, err error) error
}

// Completer completes the activities of WithAsyncCompletion when their
// generations' webhook events arrive.
type Completer struct {
	a  *Activities
	tc ActivityCompleter
}

// Completer returns the Completer of a's asynchronous activities, completing
// them through tc. a needs WithAsyncCompletion, with the store its workers
// use.
func (a *Activities) Completer(tc ActivityCompleter) (*Completer, error) {
	if a.tokens == nil {
		return nil, errors.New("mediagentemporal: Completer needs WithAsyncCompletion")
	}
	if tc == nil {
		return nil, errors.New("mediagentemporal: Completer: nil ActivityCompleter")
	}
	return &Completer{a: a, tc: tc}, nil
}

// Deliver completes the activity waiting for ev's generation when ev is
// terminal: with the Result (its output saved first when asked), or with
// the non-retryable ErrorFailed error of a render that ended in error or
// timeout. Other events, and generations no activity waits for, are ignored.
// Its signature is webhook.Handler's callback; an error makes the handler
// answer 500, so the service delivers the event again.
func (cp *Completer) Deliver(ctx context.Context, ev *webhook.Event) error {
	g := ev.Generation
	if g == nil || !g.Status.Terminal() {
		return nil
	}
	p, ok, err := cp.a.tokens.Take(ctx, g.ID)
	if err != nil || !ok {
		return err
	}
	res, ferr := finish(ctx, cp.a.c, g, p.Key, p.SaveTo)
	var result any
	if ferr == nil {
		result = res
	}
	err = cp.tc.CompleteActivity(ctx, p.Token, result, ferr)
	var notFound *serviceerror.NotFound
	if err == nil || errors.As(err, &notFound) {
		return nil // completed, or the attempt is over and its retry will find the generation by key
	}
	return errors.Join(err, cp.a.tokens.Put(ctx, g.ID, p))
}
