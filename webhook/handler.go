package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"
)

// Handler returns an http.Handler that receives deliveries signed with secret
// (or with one of WithSecrets) and calls fn with each verified event once.
//
// It answers only POST (405 otherwise), refuses a request whose headers are
// missing, malformed or stale before reading its body, and reads at most
// WithMaxBodyBytes (413 beyond, without reading any of a body whose
// Content-Length is already beyond), within WithReadTimeout (408 when the
// body is not complete by then; 400 when it breaks off). A delivery that fails verification is
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
// The error is ErrNoSecret when no non-empty secret is given, and wraps
// ErrInvalidOption for a nil fn or an invalid option, each one reported,
// joined: mistakes to catch at start-up, not per request.
func Handler(secret string, fn func(context.Context, *Event) error, opts ...Option) (http.Handler, error) {
	callback := func(*options) error {
		if fn == nil {
			return invalidOption("Handler: nil callback")
		}
		return nil
	}
	o, err := newOptions(secret, append([]Option{callback}, opts...))
	if err != nil {
		return nil, err
	}
	h := &handler{opts: o, fn: fn, store: o.store}
	if !o.storeSet {
		h.store = NewMemoryStore(DefaultStoreSize)
	}
	if o.workers > 0 {
		h.pending = make(chan struct{}, o.workers+o.queue)
		h.running = make(chan struct{}, o.workers)
	}
	return h, nil
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
	start := time.Now()
	ackBy := start.Add(h.opts.ackTimeout)
	ev, status, err := h.receive(w, r, start.Add(h.opts.readTimeout))
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
// it with. The headers are checked before the body is read, and the body
// must be complete by readBy.
func (h *handler) receive(w http.ResponseWriter, r *http.Request, readBy time.Time) (*Event, int, error) {
	d, err := h.opts.readHeaders(r.Header)
	if err != nil {
		return nil, http.StatusUnauthorized, err
	}
	if r.ContentLength > h.opts.maxBodyBytes {
		// Declared too large: refuse without reading a byte of it.
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("webhook: body of %d bytes over %d", r.ContentLength, h.opts.maxBodyBytes)
	}
	payload, err := readBody(w, r.Body, h.opts.maxBodyBytes, readBy)
	switch {
	case errors.Is(err, errTooLarge):
		closeAfter(w)
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("webhook: body over %d bytes", h.opts.maxBodyBytes)
	case errors.Is(err, os.ErrDeadlineExceeded):
		closeAfter(w)
		return nil, http.StatusRequestTimeout, fmt.Errorf("webhook: body not read within %v: %w", h.opts.readTimeout, err)
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

// closeAfter asks the server to close the connection after the answer;
// otherwise net/http reads the rest of the body first, the very wait the
// refusal was meant to end.
func closeAfter(w http.ResponseWriter) { w.Header().Set("Connection", "close") }

var errTooLarge = errors.New("webhook: body too large")

// readBody reads at most limit bytes of body, failing with an error
// matching os.ErrDeadlineExceeded once deadline passes: through the
// server's read deadline where it can set one, else the timer.
func readBody(w http.ResponseWriter, body io.Reader, limit int64, deadline time.Time) ([]byte, error) {
	_ = http.NewResponseController(w).SetReadDeadline(deadline)

	type result struct {
		payload []byte
		err     error
	}
	done := make(chan result, 1)
	go func() {
		// After a timeout this may still be blocked in a Read: it touches
		// nothing the handler uses afterwards, w included.
		payload, err := io.ReadAll(io.LimitReader(&deadlineReader{r: body, deadline: deadline}, limit+1))
		if err == nil && int64(len(payload)) > limit {
			err = errTooLarge
		}
		done <- result{payload, err}
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case res := <-done:
		return res.payload, res.err
	case <-timer.C:
		return nil, os.ErrDeadlineExceeded
	}
}

// deadlineReader fails every Read that starts after deadline, so a reader
// left behind by a timeout stops at the sender's next byte.
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

// process runs the callback; on failure it forgets the delivery, so a
// resend is taken again.
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
