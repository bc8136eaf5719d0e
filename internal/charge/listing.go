package charge

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediagen/mediagen-go/internal/retry"
)

// maxSearchPages only stops a list that never reaches its time bound (a
// cursor that cycles): a search reads every row requested since its attempt
// began, however many.
var maxSearchPages = 10_000

// SetMaxSearchPages sets the page cap of searches and returns the old one,
// for tests.
func SetMaxSearchPages(n int) int {
	old := maxSearchPages
	maxSearchPages = n
	return old
}

// Source pages the rows of one group (a feature), newest first, under the
// settings of the call that lists.
type Source[T any] interface {
	// Page returns the page at cursor ("" for the newest), the next cursor
	// ("" after the last page) and the answer's Date.
	Page(ctx context.Context, cursor string) (rows []*T, next string, date time.Time, err error)
	Requested(row *T) time.Time // on the service's clock
	// Key returns what a search matches a row by; false when none can.
	Key(row *T) (string, bool)
	// Clock and Logger are the listing call's.
	Clock() retry.Clock
	Logger() *slog.Logger
}

// Listing runs the listings searches share, one group at a time: after a
// crash many keys are searched over the same newest rows, and one listing
// serves them all at the cost of the deepest. The zero value is ready.
type Listing[T any] struct {
	// Gather is how long a listing of a group listed less than burst ago
	// first waits for more searches: ambiguous failures come in bursts, and
	// a lone one searches at once. On the wall clock: it paces this
	// client's callers, not the service.
	Gather time.Duration

	mu      sync.Mutex
	waiting map[string][]*waiter[T] // for the next listing of the group
	last    map[string]time.Time    // when the group's last listing ended
}

// burst is how recent a group's last listing makes the next one wait.
const burst = 2 * time.Second

// waiter is one search waiting for a listing.
type waiter[T any] struct {
	ctx  context.Context
	key  string
	win  Window
	done chan struct{}

	rows  []*T // matches newest first, then oldest first once done
	bound time.Time
	err   error
}

// Find lists group through src newest first and returns the rows of key
// requested inside win, oldest first, with the bound used. A shared search
// joins the group's next listing, run through the first waiter's src:
// share only when every such src is the client's own.
func (l *Listing[T]) Find(ctx context.Context, group string, src Source[T], key string, win Window, shared bool) ([]*T, time.Time, error) {
	w := &waiter[T]{ctx: ctx, key: key, win: win, done: make(chan struct{})}
	if !shared {
		list(ctx, src, group, []*waiter[T]{w})
		return w.rows, w.bound, w.err
	}
	l.mu.Lock()
	first := len(l.waiting[group]) == 0
	if l.waiting == nil {
		l.waiting, l.last = map[string][]*waiter[T]{}, map[string]time.Time{}
	}
	l.waiting[group] = append(l.waiting[group], w)
	l.mu.Unlock()
	if first {
		go l.run(group, src)
	}
	select {
	case <-w.done:
		return w.rows, w.bound, w.err
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	}
}

// Waiting returns how many searches of group wait for a listing, for tests.
func (l *Listing[T]) Waiting(group string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.waiting[group])
}

// Idle reports whether no search waits, for tests.
func (l *Listing[T]) Idle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.waiting) == 0
}

// run lists for group's waiters, a batch at a time, until none waits; one
// arriving mid-listing waits for the next.
func (l *Listing[T]) run(group string, src Source[T]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.waiting[group]) > 0 {
		recent := time.Since(l.last[group]) < burst
		l.mu.Unlock()
		if recent {
			time.Sleep(l.Gather)
		}
		l.mu.Lock()
		ws := l.waiting[group]
		l.mu.Unlock()
		listShared(src, group, ws)
		l.mu.Lock()
		l.last[group] = time.Now()
		l.waiting[group] = slices.Clone(l.waiting[group][len(ws):])
	}
	delete(l.waiting, group)
}

// listShared lists for ws until each has its answer or stopped waiting.
func listShared[T any](src Source[T], group string, ws []*waiter[T]) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var left atomic.Int32
	left.Store(int32(len(ws)))
	for _, w := range ws {
		stop := context.AfterFunc(w.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	list(ctx, src, group, ws)
}

// list pages group newest first past every waiter's bound, hands each its
// matches and closes done.
func list[T any](ctx context.Context, src Source[T], group string, ws []*waiter[T]) {
	defer func() {
		for _, w := range ws {
			slices.Reverse(w.rows)
			close(w.done)
		}
	}()
	fail := func(err error) {
		for _, w := range ws {
			w.rows, w.bound, w.err = nil, time.Time{}, err
		}
	}
	byKey := map[string][]*waiter[T]{}
	for _, w := range ws {
		byKey[w.key] = append(byKey[w.key], w)
	}
	var deepest time.Time // the oldest bound: where the listing may stop
	cursor := ""
	for page := 0; ; page++ {
		if page == maxSearchPages {
			fail(fmt.Errorf("mediagen: read %d pages of %s without reaching the rows requested before the attempt began; stopped searching", page, group))
			return
		}
		rows, next, date, err := src.Page(ctx, cursor)
		if err != nil {
			fail(err)
			return
		}
		if page == 0 {
			received := src.Clock().Now()
			for i, w := range ws {
				w.bound = w.win.Bound(date, received)
				if i == 0 || w.bound.Before(deepest) {
					deepest = w.bound
				}
			}
		}
		older := false
		for _, row := range rows {
			requested := src.Requested(row)
			if requested.Before(deepest) {
				older = true
				continue
			}
			key, ok := src.Key(row)
			if !ok {
				continue
			}
			for _, w := range byKey[key] {
				if !requested.Before(w.bound) {
					w.rows = append(w.rows, row)
				}
			}
		}
		if older || next == "" {
			break
		}
		cursor = next
	}
	src.Logger().DebugContext(ctx, "mediagen: searched "+group, slog.Int("searches", len(ws)), slog.Time("since", deepest))
}
