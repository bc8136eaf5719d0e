package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// Handler returns an http.Handler that receives deliveries signed with secret
// (or with one of WithSecrets) and calls fn with each verified event once.
//
// It answers only POST (405 otherwise), refuses a request whose headers are
// missing, malformed or stale before reading its body, and reads at most
// WithMaxBodyBytes (413 beyond, without reading any of a body whose
// Content-Length is already beyond). A delivery that fails verification is
// answered 401, a signed body that is not an event 400. These answers carry
// the status text only; the reason goes to WithErrorFunc. A delivery of an
// event already taken is answered 200 without calling fn (see Store and
// WithStore).
//
// By default fn runs inline: 200 when it returns nil; 500 when it fails, and
// the delivery is forgotten so the service's retry is processed; 202 when it
// is still running after WithAckTimeout, since the service would otherwise
// time out and resend. WithAsync acknowledges at once and runs fn in a
// bounded pool instead. Either way the context fn receives carries the
// request's values but is not cancelled when the service hangs up, so
// acknowledged work is not cut short; work still running when the program
// exits is lost, and the service does not resend what was acknowledged
// (polling stays authoritative). A panic in fn is recovered and treated as a
// failure.
//
// Handler panics when fn is nil, no non-empty secret is given, or an option
// is invalid, as http.Handle does with a bad pattern: these are mistakes to
// catch at start-up, not per request.
func Handler(secret string, fn func(context.Context, *Event) error, opts ...Option) http.Handler {
	if fn == nil {
		panic("webhook: Handler: nil callback")
	}
	o, err := newOptions(secret, opts)
	if err != nil {
		panic("webhook: Handler: " + err.Error())
	}
	h := &handler{opts: o, fn: fn, store: o.store}
	if !o.storeSet {
		h.store = NewMemoryStore(DefaultStoreSize)
	}
	if o.workers > 0 {
		h.pending = make(chan struct{}, o.workers+o.queue)
		h.running = make(chan struct{}, o.workers)
	}
	return h
}

type handler struct {
	opts  *options
	fn    func(context.Context, *Event) error
	store Store // nil when duplicate detection is off

	// In hand-off mode, pending holds a token per delivery accepted and not
	// finished, running one per callback in progress.
	pending chan struct{}
	running chan struct{}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		answer(w, http.StatusMethodNotAllowed)
		return
	}
	// The service's 5-second window runs from its request, so the ack
	// timeout does too: time spent reading the body and in the store counts.
	ackBy := time.Now().Add(h.opts.ackTimeout)
	ev, status, err := h.receive(w, r)
	if err != nil {
		h.opts.onError(r.Context(), nil, err)
		answer(w, status)
		return
	}
	key := ev.dedupeKey()
	if h.store != nil && key != "" {
		claimCtx, cancel := context.WithDeadline(r.Context(), ackBy)
		fresh, err := h.store.Claim(claimCtx, key)
		cancel()
		if err != nil {
			// Without the store a repeat cannot be told apart; the service retries.
			h.opts.onError(r.Context(), ev, fmt.Errorf("webhook: store: %w", err))
			answer(w, http.StatusInternalServerError)
			return
		}
		if !fresh {
			answer(w, http.StatusOK)
			return
		}
	}
	ctx := context.WithoutCancel(r.Context())
	if h.pending != nil {
		h.handOff(ctx, w, key, ev)
		return
	}
	h.inline(ctx, w, key, ev, time.Until(ackBy))
}

// receive reads and verifies the delivery, or returns the status to refuse
// it with. The headers are checked before the body is read.
func (h *handler) receive(w http.ResponseWriter, r *http.Request) (*Event, int, error) {
	d, err := h.opts.readHeaders(r.Header)
	if err != nil {
		return nil, http.StatusUnauthorized, err
	}
	if r.ContentLength > h.opts.maxBodyBytes {
		// Declared too large: refuse without reading a byte of it.
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("webhook: body of %d bytes over %d", r.ContentLength, h.opts.maxBodyBytes)
	}
	payload, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.maxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("webhook: body over %d bytes", tooLarge.Limit)
	case err != nil:
		return nil, http.StatusBadRequest, fmt.Errorf("webhook: reading body: %w", err)
	}
	if err := h.opts.match(d, payload); err != nil {
		return nil, http.StatusUnauthorized, err
	}
	ev, err := decodeEvent(payload)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	return ev, http.StatusOK, nil
}

// inline runs the callback and answers with its outcome, or with 202 once
// the time left for the acknowledgement passes, leaving it to finish.
func (h *handler) inline(ctx context.Context, w http.ResponseWriter, key string, ev *Event, left time.Duration) {
	done := make(chan error, 1)
	go func() { done <- h.process(ctx, key, ev) }()
	timer := time.NewTimer(left)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			answer(w, http.StatusInternalServerError)
			return
		}
		answer(w, http.StatusOK)
	case <-timer.C:
		answer(w, http.StatusAccepted)
	}
}

// handOff queues the event for the worker pool and acknowledges it, or
// answers 503 when the pool and its queue are full so the service retries.
func (h *handler) handOff(ctx context.Context, w http.ResponseWriter, key string, ev *Event) {
	select {
	case h.pending <- struct{}{}:
	default:
		h.release(ctx, key, ev)
		h.opts.onError(ctx, ev, errors.New("webhook: hand-off queue full"))
		answer(w, http.StatusServiceUnavailable)
		return
	}
	go func() {
		defer func() { <-h.pending }()
		h.running <- struct{}{}
		defer func() { <-h.running }()
		_ = h.process(ctx, key, ev) // process reports its own failure
	}()
	answer(w, http.StatusAccepted)
}

// process runs the callback. On failure it forgets the delivery, so a
// resend is taken again, and reports the error.
func (h *handler) process(ctx context.Context, key string, ev *Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("webhook: callback panicked: %v", p)
		}
		if err != nil {
			h.release(ctx, key, ev)
			h.opts.onError(ctx, ev, err)
		}
	}()
	return h.fn(ctx, ev)
}

func (h *handler) release(ctx context.Context, key string, ev *Event) {
	if h.store == nil || key == "" {
		return
	}
	if err := h.store.Release(ctx, key); err != nil {
		h.opts.onError(ctx, ev, fmt.Errorf("webhook: store: %w", err))
	}
}

// answer writes the status with its standard text only, so a caller
// learns nothing about why a delivery was refused.
func answer(w http.ResponseWriter, status int) {
	if status < http.StatusBadRequest {
		w.WriteHeader(status)
		return
	}
	http.Error(w, http.StatusText(status), status)
}

// logError is the default WithErrorFunc: refused deliveries are warnings,
// failures of the callback or the store errors.
func logError(ctx context.Context, ev *Event, err error) {
	if ev == nil {
		slog.WarnContext(ctx, "webhook: delivery refused", "err", err)
		return
	}
	slog.ErrorContext(ctx, "webhook: delivery failed", "event", string(ev.Name), "key", ev.dedupeKey(), "err", err)
}
