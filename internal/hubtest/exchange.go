// Package hubtest holds a test double of package hub: an exchange in
// memory, which the hubs of one test share as replicas share a table.
package hubtest

import (
	"context"
	"sync"

	"github.com/mediagen/mediagen-go/webhook"
)

// Exchange is a hub.Exchange in memory: every hub given it reads what the
// others published, in order. It is safe for concurrent use.
type Exchange struct {
	mu  sync.Mutex
	evs []*webhook.Event
}

// Publish keeps ev.
func (x *Exchange) Publish(_ context.Context, ev *webhook.Event) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.evs = append(x.evs, ev)
	return nil
}

// Since returns the events published after cursor and the next cursor.
func (x *Exchange) Since(_ context.Context, cursor int64) ([]*webhook.Event, int64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]*webhook.Event(nil), x.evs[cursor:]...), int64(len(x.evs)), nil
}

// Len returns how many events were published.
func (x *Exchange) Len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.evs)
}
