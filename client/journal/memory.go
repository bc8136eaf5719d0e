package journal

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Memory is a journal in this process's memory: keys charge once across
// its goroutines and clients, not across processes or restarts.
type Memory struct {
	mu   sync.Mutex
	recs map[string]*Record
}

// NewMemory returns an empty journal in memory.
func NewMemory() *Memory { return &Memory{recs: map[string]*Record{}} }

var _ Journal = (*Memory)(nil)

// Claim implements [Journal].
func (m *Memory) Claim(_ context.Context, r Record) (Record, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if have, ok := m.recs[r.Key]; ok {
		return *have, false, nil
	}
	m.recs[r.Key] = &r
	return r, true, nil
}

// Get implements [Journal].
func (m *Memory) Get(_ context.Context, key string) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.recs[key]; ok {
		return *r, nil
	}
	return Record{}, ErrNotFound
}

// Take implements [Journal].
func (m *Memory) Take(_ context.Context, key string, prev Record, holder string, until, started time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[key]
	if !ok || r.ID != "" || r.Holder != prev.Holder || !r.HeldUntil.Equal(prev.HeldUntil) {
		return false, nil
	}
	r.Holder, r.HeldUntil, r.Started = holder, until, started
	return true, nil
}

// Renew implements [Journal].
func (m *Memory) Renew(_ context.Context, key, holder string, until time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[key]
	if !ok || r.ID != "" || r.Holder != holder {
		return false, nil
	}
	r.HeldUntil = until
	return true, nil
}

// Settle implements [Journal].
func (m *Memory) Settle(_ context.Context, key, holder, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[key]
	if !ok || r.ID != "" || r.Holder != holder {
		return ErrNotHeld
	}
	r.ID, r.HeldUntil = id, time.Time{}
	return nil
}

// Release implements [Journal].
func (m *Memory) Release(_ context.Context, key, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.recs[key]; ok && r.ID == "" && r.Holder == holder {
		delete(m.recs, key)
	}
	return nil
}

// Mark implements [Journal].
func (m *Memory) Mark(_ context.Context, key string, finished, saved bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[key]
	if !ok {
		return ErrNotFound
	}
	r.Finished, r.Saved = r.Finished || finished, r.Saved || saved
	return nil
}

// Unfinished implements [Journal]; records of one instant come in key
// order, as in SQL.
func (m *Memory) Unfinished(_ context.Context) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Record
	for _, r := range m.recs {
		if r.ID != "" && !(r.Finished && r.Saved) {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(a, b Record) int { return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.Key, b.Key)) })
	return out, nil
}

// Cleanup implements [Journal].
func (m *Memory) Cleanup(_ context.Context, before time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.recs)
	maps.DeleteFunc(m.recs, func(_ string, r *Record) bool { return r.Created.Before(before) })
	return n - len(m.recs), nil
}
