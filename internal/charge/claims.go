package charge

import (
	"context"
	"sync"
	"time"
)

// maxClaims bounds the ids remembered; one forgotten is old enough that a
// search's time bound excludes it anyway.
const maxClaims = 50_000

// claims remembers the rows a client handed to a caller, so a search never
// hands one to two callers. Rows calls created are many and read only by
// the rare search: a ring, without hashing. Rows searches claimed are few
// and read by every call: a map.
type claims struct {
	mu     sync.Mutex
	handed ring             // ids handed out by the calls that created them
	found  map[string]claim // ids claimed by searches
	order  ring             // found's ids, to forget the oldest
}

// claim is a search's claim of an id that may be another caller's whose
// answer is on its way; that caller then searches from bound, where the
// searcher's own row must lie.
type claim struct{ bound time.Time }

func newClaims() *claims { return &claims{found: map[string]claim{}} }

// take records that the call that created id hands it out; false when a
// search claimed it first, with that claim.
func (cs *claims) take(id string) (claim, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if prev, ok := cs.found[id]; ok {
		return prev, false
	}
	cs.handed.push(id)
	return claim{}, true
}

// takeFirst claims for a search the first candidate not handed out;
// oldest first, so a search prefers the row nearest its own attempt.
func (cs *claims) takeFirst(ids []string, cl claim) (string, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	free := make(map[string]bool, len(ids))
	for _, id := range ids {
		free[id] = true
	}
	for _, id := range cs.handed.ids {
		delete(free, id)
	}
	for _, id := range ids {
		if _, taken := cs.found[id]; free[id] && !taken {
			cs.found[id] = cl
			if old, ok := cs.order.push(id); ok {
				delete(cs.found, old)
			}
			return id, true
		}
	}
	return "", false
}

// ring holds the last maxClaims ids pushed.
type ring struct {
	ids  []string
	next int
}

// push adds id, and returns the id it replaced once the ring is full.
func (r *ring) push(id string) (string, bool) {
	if len(r.ids) < maxClaims {
		r.ids = append(r.ids, id)
		return "", false
	}
	old := r.ids[r.next]
	r.ids[r.next] = id
	r.next = (r.next + 1) % maxClaims
	return old, true
}

// searchLocks serializes each key's searches; waiting honours the context.
type searchLocks struct {
	mu sync.Mutex
	m  map[string]*searchLock
}

// searchLock is one key's lock and how many searches hold or want it.
type searchLock struct {
	sem  chan struct{}
	refs int
}

func newSearchLocks() *searchLocks { return &searchLocks{m: map[string]*searchLock{}} }

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
