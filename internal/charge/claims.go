package charge

import (
	"context"
	"sync"
	"time"
)

// maxClaims bounds the memory of handed-out ids. An id forgotten this way is
// old enough that the time bound of a search excludes it anyway.
const maxClaims = 50_000

// claims remembers which rows a client has handed to a caller, so that a
// search after an ambiguous failure never hands the same one to two
// callers.
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
// can share one listing ([Listing]).
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
