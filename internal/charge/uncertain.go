package charge

import (
	"context"
	"time"
)

// Uncertain is a call that failed ambiguously and whose search for what it
// may have created did not finish: the client's UncertainError.
type Uncertain struct {
	What       string
	Start, End time.Time // the attempt began at Start; the search gave up at End
	Err        error
	Window     Window
	Found      *Finding
}

// uncertain is the error of a call whose search failed: ctx's once it ended.
func uncertain(ctx context.Context, what string, start, end time.Time, err error, win Window) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	found := &Finding{turn: make(chan struct{}, 1)}
	return &Uncertain{What: what, Start: start, End: end, Err: err, Window: win, Found: found}
}

func (e *Uncertain) Error() string {
	return "mediagen: " + e.What + " may have been created and charged: " + e.Err.Error()
}

func (e *Uncertain) Unwrap() error { return e.Err }

// Finding remembers the id a later search claimed for an uncertain call, so
// finishing it again returns that row, not nil ("nothing was created"); its
// searches run one at a time.
type Finding struct {
	turn chan struct{}
	id   string // guarded by turn
	key  string // the call's idempotency key, "" for none
}

// Finish runs an uncertain call's search in win, or, once a row was
// claimed through f, reads that row again. A nil f remembers nothing.
func Finish[T any](ctx context.Context, p *Protocol, f *Finding, op Op[T], win Window) (*T, error) {
	if f == nil {
		return Search(ctx, p, op, win)
	}
	select {
	case f.turn <- struct{}{}:
		defer func() { <-f.turn }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if f.id != "" {
		return op.Get(ctx, f.id)
	}
	row, err := Search(ctx, p, op, win)
	if row != nil {
		f.id = op.ID(row)
		if f.key != "" { // the key's next call here would not find it
			p.unsettled.Store(f.key, f.id)
		}
	}
	return row, err
}
