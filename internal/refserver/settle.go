package refserver

import (
	"sync"
	"time"

	"github.com/mediagen/mediagen-go"
)

// Settle applies every transition due at the clock's current time (render
// progress, refunds, expiry) and waits until the events they produced were
// dispatched: the event sink has received them and their webhook deliveries
// have started ([Server.WaitDeliveries] waits for those to end). The server
// also settles lazily on every request and from a background ticker; Settle
// is for tests that advance a FakeClock. Do not call it from the event sink.
func (s *Server) Settle() {
	s.settle()
	s.events.wait()
}

// settle applies the transitions due now and queues their events.
func (s *Server) settle() {
	s.mu.Lock()
	s.settleLocked(s.clock.Now())
	s.mu.Unlock()
}

// lockSettled takes s.mu and applies the transitions due now, so that the
// caller reads the state of one instant, which it returns. The caller
// unlocks s.mu.
func (s *Server) lockSettled() time.Time {
	s.mu.Lock()
	now := s.clock.Now()
	s.settleLocked(now)
	return now
}

// settleLocked applies the transitions due at now, earliest first. Only the
// rows whose timer is due are touched, so the work is that of the
// transitions, whatever the number of rows. The caller holds s.mu.
func (s *Server) settleLocked(now time.Time) {
	var events []Event
	for r := s.timers.next(now); r != nil; r = s.timers.next(now) {
		var ev Event
		ok := false
		switch r := r.(type) {
		case *generation:
			ev, ok = s.settleGeneration(r, now)
		case *clone:
			ev, ok = s.advanceClone(r, now)
			delete(s.training, r)
		case *file:
			// A reservation's timer is set for its URL's expiry; if the
			// bytes landed since, the file lives on until its retention.
			if r.expired(now) {
				delete(s.files, r.id)
			} else {
				s.timers.schedule(r, r.due())
			}
		}
		if ok {
			events = append(events, ev)
		}
	}
	// Queued under the lock, so that once a settle returns, every event
	// of a transition already applied is in the queue.
	s.queueEvents(events)
}

// settleGeneration applies g's transitions due at now, drops it once it is
// gone for good, and otherwise schedules its next one. The caller holds
// s.mu.
func (s *Server) settleGeneration(g *generation, now time.Time) (Event, bool) {
	ev, ok := s.advanceGeneration(g, now)
	if (g.deleted && g.terminal()) || !now.Before(g.expiresAt) {
		delete(s.gens, g.id)
		if !g.deleted {
			s.unlist(g)
		}
		return ev, ok
	}
	s.timers.schedule(g, g.due())
	return ev, ok
}

// advanceGeneration moves g through pending, running and its end. A render
// ends once: the refund of error and timeout happens here and nowhere else.
// The caller holds s.mu.
func (s *Server) advanceGeneration(g *generation, now time.Time) (Event, bool) {
	if g.terminal() {
		return Event{}, false
	}
	if g.status == mediagen.GenerationStatusPending && !now.Before(g.runningAt) {
		g.status = mediagen.GenerationStatusRunning
	}
	if now.Before(g.endAt) {
		return Event{}, false
	}
	switch g.outcome {
	case OutcomeError:
		g.status, g.errMsg = mediagen.GenerationStatusError, renderFailedMsg
	case OutcomeTimeout:
		g.status, g.errMsg = mediagen.GenerationStatusTimeout, renderTimeoutMsg
	default:
		g.status = mediagen.GenerationStatusDone
	}
	if g.status != mediagen.GenerationStatusDone {
		if p, ok := s.projects[g.projectKey]; ok {
			p.balance += g.charge
		}
	}
	if g.deleted || !s.wantsEvent(g.webhookURL) {
		return Event{}, false
	}
	view := s.generationView(g, g.base)
	return Event{
		Name:          "generation." + string(g.status),
		ProjectAPIKey: g.projectKey,
		WebhookURL:    g.webhookURL,
		Generation:    &view,
	}, true
}

// eventQueue hands events to the server's dispatch from one goroutine, in
// order, so that neither the lock nor a request ever waits on a receiver.
type eventQueue struct {
	sink func(Event)

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []Event // queue[head:] waits for dispatch
	head    int
	busy    bool
	closed  bool
	stopped chan struct{}
}

func newEventQueue(sink func(Event)) *eventQueue {
	q := &eventQueue{sink: sink, stopped: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	if sink == nil {
		close(q.stopped)
		q.closed = true
		return q
	}
	go q.run()
	return q
}

// push queues events and reports whether they will be dispatched: after
// close, or without a sink, they are dropped.
func (q *eventQueue) push(events []Event) bool {
	if len(events) == 0 {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	if q.head > 0 && q.head >= len(q.queue)/2 {
		// Slide the waiting events down rather than let the array grow
		// behind a queue that never drains.
		n := copy(q.queue, q.queue[q.head:])
		clear(q.queue[n:])
		q.queue, q.head = q.queue[:n], 0
	}
	q.queue = append(q.queue, events...)
	q.cond.Broadcast()
	return true
}

// wait blocks until every queued event was handed to the sink.
func (q *eventQueue) wait() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for (len(q.queue) > q.head || q.busy) && !q.closed {
		q.cond.Wait()
	}
}

// close stops the dispatcher after it delivered what is queued.
func (q *eventQueue) close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
	<-q.stopped
}

func (q *eventQueue) run() {
	defer close(q.stopped)
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for len(q.queue) == q.head && !q.closed {
			q.cond.Wait()
		}
		if len(q.queue) == q.head {
			return
		}
		ev := q.queue[q.head]
		// Clear the slot so the dispatched event can be freed, and start
		// over at the front of the array once it drained.
		q.queue[q.head] = Event{}
		q.head++
		if q.head == len(q.queue) {
			q.queue, q.head = q.queue[:0], 0
		}
		q.busy = true
		q.mu.Unlock()
		q.sink(ev)
		q.mu.Lock()
		q.busy = false
		q.cond.Broadcast()
	}
}
