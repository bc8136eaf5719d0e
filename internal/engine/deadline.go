package engine

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errAttemptTimeout is the cause of an attempt cancelled at its bound.
var errAttemptTimeout = errors.New("attempt timed out")

// timeoutError is an attempt out of time: like http.Client.Timeout's, it
// reports Timeout and matches context.DeadlineExceeded.
type timeoutError struct{ d time.Duration }

func (e *timeoutError) Error() string   { return "attempt timed out after " + e.d.String() }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }
func (e *timeoutError) Unwrap() error   { return context.DeadlineExceeded }

// watchdog cancels attempts past their bound on one timer, set to the
// earliest: attempts are many and short and bounds long, so a timer each
// (context.WithTimeout) would cost more.
type watchdog struct {
	mu    sync.Mutex
	slots []watched
	free  []int     // indexes of free slots
	next  time.Time // when the timer fires; zero when it is stopped
	timer *time.Timer
}

type watched struct {
	deadline time.Time
	cancel   context.CancelCauseFunc // nil for a free slot
	fired    bool
}

// bound is an attempt's registration: release it when the attempt ends.
type bound struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	slot   int
}

// watch returns ctx bounded by d from now, unless ctx ends sooner.
func (w *watchdog) watch(ctx context.Context, d time.Duration) bound {
	deadline := time.Now().Add(d)
	if dl, ok := ctx.Deadline(); ok && !dl.After(deadline) {
		return bound{ctx: ctx, slot: -1}
	}
	cctx, cancel := context.WithCancelCause(ctx)
	actx := &boundCtx{Context: cctx, deadline: deadline}
	w.mu.Lock()
	defer w.mu.Unlock()
	i := len(w.slots)
	if n := len(w.free); n > 0 {
		i, w.free = w.free[n-1], w.free[:n-1]
		w.slots[i] = watched{deadline: deadline, cancel: cancel}
	} else {
		w.slots = append(w.slots, watched{deadline: deadline, cancel: cancel})
	}
	if w.next.IsZero() || deadline.Before(w.next) {
		w.next = deadline
		if w.timer == nil {
			w.timer = time.AfterFunc(d, w.fire)
		} else {
			w.timer.Reset(d)
		}
	}
	return bound{ctx: actx, cancel: cancel, slot: i}
}

// boundCtx reports the attempt's bound as its deadline, for middleware and
// transports that read it.
type boundCtx struct {
	context.Context
	deadline time.Time
}

func (c *boundCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// release ends b's attempt: its slot is freed and its context cancelled.
func (w *watchdog) release(b bound) {
	if b.slot < 0 {
		return
	}
	w.mu.Lock()
	w.slots[b.slot] = watched{}
	w.free = append(w.free, b.slot)
	w.mu.Unlock()
	b.cancel(context.Canceled)
}

// timedOut reports whether b's attempt was cancelled at its bound.
func (b bound) timedOut() bool {
	return b.slot >= 0 && context.Cause(b.ctx) == errAttemptTimeout
}

// fire cancels the attempts past their bound and sets the timer to the next.
func (w *watchdog) fire() {
	now := time.Now()
	var expired []context.CancelCauseFunc
	w.mu.Lock()
	w.next = time.Time{}
	for i := range w.slots {
		s := &w.slots[i]
		switch {
		case s.cancel == nil || s.fired:
		case !s.deadline.After(now):
			s.fired = true
			expired = append(expired, s.cancel)
		case w.next.IsZero() || s.deadline.Before(w.next):
			w.next = s.deadline
		}
	}
	if !w.next.IsZero() {
		w.timer.Reset(w.next.Sub(now))
	}
	w.mu.Unlock()
	for _, cancel := range expired {
		cancel(errAttemptTimeout)
	}
}
