package charge

import (
	"context"
	"time"
)

// Uncertain is a charging call that failed ambiguously and whose search for
// what it may have created did not finish. The client turns it into its
// public UncertainError.
type Uncertain struct {
	What       string
	Start, End time.Time // the attempt began at Start; the search gave up at End
	Err        error
	Window     Window
	Found      *Finding
}

func newUncertain(what string, start, end time.Time, err error, win Window) *Uncertain {
	return &Uncertain{What: what, Start: start, End: end, Err: err, Window: win, Found: &Finding{turn: make(chan struct{}, 1)}}
}

func (e *Uncertain) Error() string {
	return "mediagen: " + e.What + " may have been created and charged: " + e.Err.Error()
}

func (e *Uncertain) Unwrap() error { return e.Err }

// Finding remembers the id a later search claimed for an uncertain call, so
// that finishing it again returns that row rather than nil (which would
// read as "nothing was created"), and runs those searches one at a time.
type Finding struct {
	turn chan struct{}
	id   string // guarded by turn
}

// Finish runs the search in win of an uncertain call once per finding:
// when an earlier call claimed a row, op reads it again; otherwise the
// search runs, and the id of a row it returns is remembered. A nil f
// remembers nothing.
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
	}
	return row, err
}
