package batch

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/mediagen/mediagen-go/client"
)

// startWindow is the most creates in flight when a run starts.
const startWindow = 4

// defaultRetryAfter is the pause after a 429 that named no Retry-After.
const defaultRetryAfter = time.Second

// window bounds the creates in flight, AIMD with a slow start like TCP's
// congestion window ([Run]). Only 429s of creates sent since the last
// decrease decrease it again: those sent before say nothing new.
type window struct {
	mu         sync.Mutex
	size       float64 // creates in flight may reach int(size)
	ceiling    int
	fixed      bool // never adapt: the load benchmark's baseline
	inFlight   int
	epoch      int // decreases so far; 0 is the slow start
	pauseUntil time.Time
	clock      client.Clock
	wake       chan struct{} // closed and replaced at every change
}

func newWindow(ceiling int, fixed bool, clock client.Clock) *window {
	size := min(startWindow, ceiling)
	if fixed {
		size = ceiling
	}
	return &window{size: float64(size), ceiling: ceiling, fixed: fixed, clock: clock, wake: make(chan struct{})}
}

func (w *window) limit() int { return max(1, int(w.size)) }

// Limit is limit under the lock, for progress reports.
func (w *window) Limit() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.limit()
}

// acquire waits out any pause and takes a free slot, returning the epoch
// the create is sent in.
func (w *window) acquire(ctx context.Context) (int, error) {
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		w.mu.Lock()
		if d := w.pauseUntil.Sub(w.clock.Now()); d > 0 {
			w.mu.Unlock()
			if err := w.clock.Sleep(ctx, d); err != nil {
				return 0, err
			}
			continue
		}
		if w.inFlight < w.limit() {
			w.inFlight++
			epoch := w.epoch
			w.mu.Unlock()
			return epoch, nil
		}
		wake := w.wake
		w.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

type outcome int

const (
	neutral     outcome = iota // failed in a way that says nothing of the rate
	success                    // the service took it
	rateLimited                // the service answered 429
)

// done frees the slot of a create sent in epoch and adapts to how it ended.
func (w *window) done(epoch int, o outcome, retryAfter time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inFlight--
	switch o {
	case success:
		if !w.fixed {
			step := 1 / w.size
			if w.epoch == 0 {
				step = 1
			}
			w.size = min(float64(w.ceiling), w.size+step)
		}
	case rateLimited:
		pause := cmp.Or(max(retryAfter, 0), defaultRetryAfter)
		if until := w.clock.Now().Add(pause); until.After(w.pauseUntil) {
			w.pauseUntil = until
		}
		if !w.fixed && epoch == w.epoch {
			w.size = max(1, w.size/2)
			w.epoch++
		}
	}
	close(w.wake)
	w.wake = make(chan struct{})
}

// changed returns a channel closed at the window's next change, and the
// creates in flight.
func (w *window) changed() (<-chan struct{}, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wake, w.inFlight
}
