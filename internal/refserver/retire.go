package refserver

import (
	"sync"

	"github.com/mediagen/mediagen-go/internal/refserver/catalog"
)

// retiredVoices is the set of catalog voices retired at run time, beside
// those the catalog ships retired. Its own lock: lookups happen both with
// and without s.mu held.
type retiredVoices struct {
	mu  sync.RWMutex
	ids map[string]bool
}

// RetireVoice retires a catalog voice, given by id or slug, on this server:
// from then on every route answers 404 for it, as the service does for a
// voice it retired. It reports false when no live catalog voice has that
// id or slug.
func (s *Server) RetireVoice(idOrSlug string) bool {
	v, ok := s.lookupVoice(idOrSlug)
	if !ok {
		return false
	}
	s.retired.mu.Lock()
	defer s.retired.mu.Unlock()
	if s.retired.ids == nil {
		s.retired.ids = map[string]bool{}
	}
	s.retired.ids[v.ID] = true
	return true
}

// lookupVoice finds a live catalog voice of this server by id or slug.
func (s *Server) lookupVoice(idOrSlug string) (catalog.Voice, bool) {
	v, ok := catalog.LookupVoice(idOrSlug)
	if !ok {
		return catalog.Voice{}, false
	}
	s.retired.mu.RLock()
	defer s.retired.mu.RUnlock()
	if s.retired.ids[v.ID] {
		return catalog.Voice{}, false
	}
	return v, true
}

// catalogVoices lists the live catalog of this server.
func (s *Server) catalogVoices() []catalog.Voice {
	all := catalog.Voices()
	s.retired.mu.RLock()
	defer s.retired.mu.RUnlock()
	if len(s.retired.ids) == 0 {
		return all
	}
	out := all[:0]
	for _, v := range all {
		if !s.retired.ids[v.ID] {
			out = append(out, v)
		}
	}
	return out
}
