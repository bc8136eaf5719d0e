package refserver

import (
	"slices"
	"sync"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/refserver/delivery"
)

// keptDeliveries is how many webhook deliveries [Server.Deliveries] keeps
// per project, the newest.
const keptDeliveries = 100

// Delivery is one webhook delivery of a project's event, as the server
// recorded it: queued, after each attempt, and once it ended.
type Delivery struct {
	Queued time.Time       // by the server's clock, when the event was handed to the sender
	Result delivery.Result // URL, event, subject and the attempts so far
	Ended  bool            // acknowledged, or dropped after its retry
}

// deliveryLog keeps the newest deliveries of each project. It has its own
// lock: the sender reports on its goroutines, outside s.mu.
type deliveryLog struct {
	mu        sync.Mutex
	byProject map[string][]*Delivery // by API key, oldest first
	open      map[string]*Delivery   // by event and subject, until it ends
}

// openKey names a delivery in flight: each generation or voice emits one
// terminal event, so the pair is unique.
func openKey(event, subject string) string { return event + " " + subject }

// start records a delivery about to be handed to the sender.
func (l *deliveryLog) start(apiKey string, at time.Time, r delivery.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byProject == nil {
		l.byProject, l.open = map[string][]*Delivery{}, map[string]*Delivery{}
	}
	d := &Delivery{Queued: at, Result: r}
	list := append(l.byProject[apiKey], d)
	if len(list) > keptDeliveries {
		delete(l.open, openKey(list[0].Result.Event, list[0].Result.Subject))
		list = slices.Delete(list, 0, 1)
	}
	l.byProject[apiKey] = list
	l.open[openKey(r.Event, r.Subject)] = d
}

// update records what the sender reported; ended says it was the last
// report of the delivery.
func (l *deliveryLog) update(r delivery.Result, ended bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := openKey(r.Event, r.Subject)
	d, ok := l.open[k]
	if !ok {
		return // evicted meanwhile
	}
	d.Result, d.Ended = r, ended
	if ended {
		delete(l.open, k)
	}
}

// list copies the project's deliveries, newest first.
func (l *deliveryLog) list(apiKey string) []Delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	src := l.byProject[apiKey]
	out := make([]Delivery, 0, len(src))
	for i := len(src) - 1; i >= 0; i-- {
		out = append(out, *src[i])
	}
	return out
}

// observe wraps the sender's observers in opts so that the log hears of
// every attempt and every end, before the caller's own observers.
func (l *deliveryLog) observe(opts delivery.Options) delivery.Options {
	onAttempt, onResult := opts.OnAttempt, opts.OnResult
	opts.OnAttempt = func(r delivery.Result) {
		l.update(r, false)
		if onAttempt != nil {
			onAttempt(r)
		}
	}
	opts.OnResult = func(r delivery.Result) {
		l.update(r, true)
		if onResult != nil {
			onResult(r)
		}
	}
	return opts
}

// Deliveries returns the webhook deliveries of apiKey's project, newest
// first, the last 100 at most: each one's URL, event, subject and attempts
// (signature headers sent, answer, latency), also while its retry is
// pending. It is empty for an unknown key and when deliveries are off.
func (s *Server) Deliveries(apiKey string) []Delivery {
	return s.deliveries.list(apiKey)
}

// RecentGenerations returns the newest generations of apiKey's project, at
// most limit, as GET /v3/generations answers them at this instant with
// output URLs for base (scheme and host, such as "http://127.0.0.1:8080").
// ok is false when no project has that key.
func (s *Server) RecentGenerations(apiKey, base string, limit int) (gens []mediagen.Generation, ok bool) {
	s.lockSettled()
	defer s.mu.Unlock()
	p, ok := s.projects[apiKey]
	if !ok {
		return nil, false
	}
	rows, _ := p.gens.Page(nil, limit)
	gens = make([]mediagen.Generation, 0, len(rows))
	for _, g := range rows {
		gens = append(gens, s.generationView(g, base))
	}
	return gens, true
}

// Now returns the time on the server's clock.
func (s *Server) Now() time.Time { return s.clock.Now() }
