package refserver

import (
	"github.com/mediagen/mediagen-go/internal/refserver/delivery"
)

// WithWebhookDelivery tunes how webhook events are delivered: the transport,
// the acknowledgement window (Timeout, 5 s by default), the pause before the
// single retry (RetryDelay, 2 s by default) and an OnResult observer. Tests
// shorten the delays. When opts.Now is nil the server's [Clock] stamps
// X-Service-Timestamp, so a receiver verifying with the same clock agrees
// with a [FakeClock].
func WithWebhookDelivery(opts delivery.Options) Option {
	return func(s *Server) {
		s.deliveryOpts = opts
		s.noDelivery = false
	}
}

// WithoutWebhookDelivery turns webhook deliveries off: no request leaves
// the server. [WithEventSink] still sees every event.
func WithoutWebhookDelivery() Option {
	return func(s *Server) { s.noDelivery = true }
}

// newSender starts the webhook sender unless deliveries are off. It runs
// after every option, so the clock is final.
func (s *Server) newSender() *delivery.Sender {
	if s.noDelivery {
		return nil
	}
	opts := s.deliveries.observe(s.deliveryOpts)
	if opts.Now == nil {
		opts.Now = s.clock.Now
	}
	return delivery.New(opts)
}

// dispatch hands one event to the webhook sender and the event sink. It
// runs on the event queue's goroutine, never under s.mu.
func (s *Server) dispatch(ev Event) {
	if !s.stillWanted(ev) {
		return
	}
	s.deliver(ev)
	if s.sink != nil {
		s.sink(ev)
	}
}

// deliver starts the signed delivery of ev, when it has a webhook URL. The
// secrets are read now rather than when the event was queued, so a rotation
// in between is honoured; the sender signs each attempt with a fresh
// timestamp. Sending returns at once: the sender works on its own
// goroutines.
func (s *Server) deliver(ev Event) {
	if s.sender == nil || ev.WebhookURL == "" {
		return
	}
	secrets := s.WebhookSecrets(ev.ProjectAPIKey)
	if len(secrets) == 0 {
		return
	}
	// Encoding a generated model cannot fail, and a lost event is what
	// webhooks allow (polling stays authoritative), so errors are ignored.
	subject := ""
	if ev.Generation != nil {
		subject = ev.Generation.ID
	} else if ev.Voice != nil {
		subject = ev.Voice.ID
	}
	s.deliveries.start(ev.ProjectAPIKey, s.clock.Now(), delivery.Result{URL: ev.WebhookURL, Event: ev.Name, Subject: subject})
	switch {
	case ev.Generation != nil:
		_ = s.sender.SendGeneration(ev.WebhookURL, secrets, ev.Name, ev.Generation)
	case ev.Voice != nil:
		_ = s.sender.SendVoice(ev.WebhookURL, secrets, ev.Name, ev.Voice)
	}
}

// wantsEvent reports whether an event for a row with this webhook URL
// reaches anyone: the sink sees every event, the sender those with a URL.
// Events nobody would receive are not built.
func (s *Server) wantsEvent(webhookURL string) bool {
	return s.sink != nil || (s.sender != nil && webhookURL != "")
}

// queueEvents queues events for dispatch and remembers the generations
// among them, so that a DELETE arriving before dispatch cancels their
// event. The caller holds s.mu.
func (s *Server) queueEvents(events []Event) {
	if !s.events.push(events) {
		return // closed: nothing will be dispatched
	}
	for _, ev := range events {
		if ev.Generation != nil {
			s.pending[ev.Generation.ID] = true
		}
	}
}

// cancelEvent withdraws the queued event of a generation being deleted.
// The caller holds s.mu.
func (s *Server) cancelEvent(id string) {
	if _, ok := s.pending[id]; ok {
		s.pending[id] = false
	}
}

// stillWanted reports whether ev may go out: false for a generation deleted
// between reaching its end and the dispatch of its event.
func (s *Server) stillWanted(ev Event) bool {
	if ev.Generation == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	wanted, ok := s.pending[ev.Generation.ID]
	delete(s.pending, ev.Generation.ID)
	return !ok || wanted
}

// WaitDeliveries blocks until every webhook delivery started so far has
// ended: acknowledged, or dropped after its retry. Call [Server.Settle]
// first so that the events of transitions due are started.
func (s *Server) WaitDeliveries() {
	if s.sender != nil {
		s.sender.Wait()
	}
}
