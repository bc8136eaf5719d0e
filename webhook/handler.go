package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"time"
)

// Handler returns an http.Handler that calls fn once per verified event signed
// with secret (or one of WithSecrets). It answers 405 to all but POST, 401 to
// bad headers (before reading the body) or signature, 413 to a body over
// WithMaxBodyBytes, 408 to one not read within WithReadTimeout, 400 to one cut
// short or not an event, and 200 to a repeat (WithStore), with the status text
// only: reasons go to WithErrorFunc.
//
// fn runs inline: 200 when it returns nil; 500 when it fails or panics, and the
// delivery is forgotten so the retry is taken; 202 when it still runs after
// WithAckTimeout (with WithAsync, at once). Its context keeps the request's
// values but not its cancellation; work running at exit is lost (polling stays
// authoritative).
//
// The error is ErrNoSecret without a secret, and wraps ErrInvalidOption for a
// nil fn or each invalid option, joined.
func Handler(secret string, fn func(context.Context, *Event) error, opts ...Option) (http.Handler, error) {
	var nilFn error
	if fn == nil {
		nilFn = invalidOption("Handler: nil callback")
	}
	o, err := newOptions(secret, opts, nilFn)
	if err != nil {
		return nil, err
	}
	if !o.storeSet {
		o.store = NewMemoryStore(DefaultStoreSize)
	}
	h := &handler{options: o, fn: fn}
	if o.workers > 0 {
		h.pending = make(chan struct{}, o.workers+o.queue)
		h.running = make(chan struct{}, o.workers)
	}
	return h, nil
}

type handler struct {
	*options
	fn func(context.Context, *Event) error

	// With WithAsync: a token per delivery accepted and not finished, and per callback running.
	pending chan struct{}
	running chan struct{}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		answer(w, http.StatusMethodNotAllowed)
		return
	}
	// The service's window runs from its request: reading and the store count.
	start := time.Now()
	ackBy := start.Add(h.ackTimeout)
	ev, status, err := h.receive(w, r, start.Add(h.readTimeout))
	if err != nil {
		h.onError(r.Context(), nil, err)
		answer(w, status)
		return
	}
	key := ev.dedupeKey()
	if h.store != nil && key != "" {
		claimCtx, cancel := context.WithDeadline(r.Context(), ackBy)
		fresh, err := h.store.Claim(claimCtx, key)
		cancel()
		if err != nil {
			// A repeat cannot be told apart: let the service retry.
			h.onError(r.Context(), ev, fmt.Errorf("webhook: store: %w", err))
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

// receive reads and verifies the delivery, or returns the status to refuse it with.
func (h *handler) receive(w http.ResponseWriter, r *http.Request, readBy time.Time) (*Event, int, error) {
	ts, sums, err := h.readHeaders(r.Header)
	if err != nil {
		return nil, http.StatusUnauthorized, err
	}
	limit := h.maxBodyBytes
	if r.ContentLength > limit {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("webhook: body of %d bytes over %d", r.ContentLength, limit)
	}
	payload, err := readBody(w, r.Body, limit, readBy)
	// Closing after the answer spares net/http reading the rest of the body first.
	switch {
	case errors.Is(err, errTooLarge):
		w.Header().Set("Connection", "close")
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("webhook: body over %d bytes", limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		return nil, http.StatusRequestTimeout, fmt.Errorf("webhook: body not read within %v: %w", h.readTimeout, err)
	case err != nil:
		return nil, http.StatusBadRequest, fmt.Errorf("webhook: reading body: %w", err)
	}
	if err := h.match(ts, sums, payload); err != nil {
		return nil, http.StatusUnauthorized, err
	}
	ev, err := decodeEvent(payload)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	return ev, http.StatusOK, nil
}

var errTooLarge = errors.New("webhook: body too large")

// readBody reads at most limit bytes of body, failing with
// os.ErrDeadlineExceeded at deadline: the server's read deadline where it can
// set one, else the timer.
func readBody(w http.ResponseWriter, body io.Reader, limit int64, deadline time.Time) ([]byte, error) {
	_ = http.NewResponseController(w).SetReadDeadline(deadline)
	var payload []byte
	done := make(chan error, 1)
	go func() {
		// Left behind by a timeout, this touches nothing the handler still uses.
		var err error
		// One byte past the cap tells a body over it; MaxInt64+1 would wrap.
		payload, err = io.ReadAll(io.LimitReader(&deadlineReader{r: body, deadline: deadline}, min(limit, math.MaxInt64-1)+1))
		if err == nil && int64(len(payload)) > limit {
			err = errTooLarge
		}
		done <- err
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case err := <-done:
		return payload, err
	case <-timer.C:
		return nil, os.ErrDeadlineExceeded
	}
}

// deadlineReader fails every Read after deadline, so that a reader left
// behind by a timeout stops at the sender's next byte.
type deadlineReader struct {
	r        io.Reader
	deadline time.Time
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	if !time.Now().Before(d.deadline) {
		return 0, os.ErrDeadlineExceeded
	}
	return d.r.Read(p)
}

// inline answers with the callback's outcome, or 202 after left, leaving it to finish.
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

// handOff queues the event for the pool and answers 202, or 503 when full.
func (h *handler) handOff(ctx context.Context, w http.ResponseWriter, key string, ev *Event) {
	select {
	case h.pending <- struct{}{}:
	default:
		h.release(ctx, key, ev)
		h.onError(ctx, ev, errors.New("webhook: hand-off queue full"))
		answer(w, http.StatusServiceUnavailable)
		return
	}
	go func() {
		defer func() { <-h.pending }()
		h.running <- struct{}{}
		defer func() { <-h.running }()
		_ = h.process(ctx, key, ev) // it reports its own failure
	}()
	answer(w, http.StatusAccepted)
}

// process runs the callback; on failure it forgets the delivery, so a resend is taken.
func (h *handler) process(ctx context.Context, key string, ev *Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("webhook: callback panicked: %v", p)
		}
		if err != nil {
			h.release(ctx, key, ev)
			h.onError(ctx, ev, err)
		}
	}()
	return h.fn(ctx, ev)
}

func (h *handler) release(ctx context.Context, key string, ev *Event) {
	if h.store == nil || key == "" {
		return
	}
	if err := h.store.Release(ctx, key); err != nil {
		h.onError(ctx, ev, fmt.Errorf("webhook: store: %w", err))
	}
}

// answer writes the status with its standard text only.
func answer(w http.ResponseWriter, status int) {
	if status < http.StatusBadRequest {
		w.WriteHeader(status)
		return
	}
	http.Error(w, http.StatusText(status), status)
}

// logError is the default WithErrorFunc.
func logError(ctx context.Context, ev *Event, err error) {
	if ev == nil {
		slog.WarnContext(ctx, "webhook: delivery refused", "err", err)
		return
	}
	slog.ErrorContext(ctx, "webhook: delivery failed", "event", string(ev.Name), "key", ev.dedupeKey(), "err", err)
}
