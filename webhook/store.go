package webhook

import (
	"container/list"
	"context"
	"sync"
)

// Store records the deliveries Handler took, so that a repeat is acknowledged
// without running the callback twice. It must be safe for concurrent use; a
// shared database, as SQLStore, lets replicas drop each other's repeats.
type Store interface {
	// Claim records id and reports whether this call recorded it: of two
	// concurrent calls with one id, at most one reports true. It must return
	// when ctx ends (WithAckTimeout), or the 5-second window is missed.
	Claim(ctx context.Context, id string) (bool, error)
	// Release forgets id, so that a later delivery of it is taken again.
	// Handler calls it when the callback fails.
	Release(ctx context.Context, id string) error
}

// MemoryStore is a Store of the most recent ids, forgetting the oldest first.
// The service resends a delivery at most once, two seconds later, so a few
// thousand ids cover any burst.
type MemoryStore struct {
	mu    sync.Mutex
	size  int
	order *list.List // of ids, oldest first
	ids   map[string]*list.Element
}

// NewMemoryStore returns a MemoryStore of up to size ids (DefaultStoreSize below one).
func NewMemoryStore(size int) *MemoryStore {
	if size < 1 {
		size = DefaultStoreSize
	}
	return &MemoryStore{size: size, order: list.New(), ids: make(map[string]*list.Element)}
}

// Claim records id and reports whether it was not already recorded. It never fails.
func (s *MemoryStore) Claim(_ context.Context, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ids[id]; ok {
		return false, nil
	}
	if s.order.Len() >= s.size {
		oldest := s.order.Front()
		s.order.Remove(oldest)
		delete(s.ids, oldest.Value.(string))
	}
	s.ids[id] = s.order.PushBack(id)
	return true, nil
}

// Release forgets id. It never fails.
func (s *MemoryStore) Release(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.ids[id]; ok {
		s.order.Remove(e)
		delete(s.ids, id)
	}
	return nil
}

// Len returns the number of ids recorded.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}
