// Package engine is the one way the SDK sends HTTP: [Engine.Do] retries,
// classifies each attempt (not sent, may have been sent, transient, final),
// bounds it, runs middleware, and refuses to follow a redirect off the
// base URL's origin (or, for a POST, at all) or to put the key in an error.
// Per-call settings are an explicit [Call], never context values.
package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediagen/mediagen-go/internal/redact"
	"github.com/mediagen/mediagen-go/internal/retry"
	"github.com/mediagen/mediagen-go/internal/telemetry"
)

// Middleware wraps each attempt; see client.Middleware.
type Middleware func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error)

// Call is one call's settings (the client's, the call's options on top),
// shared read-only by its requests.
type Call struct {
	Timeout      time.Duration // per attempt of an API request; 0 is none
	Transfer     time.Duration // per attempt of a transfer of bytes; 0 is none
	Retry        retry.Policy
	Header       http.Header // extra API request headers
	UserAgent    []string    // the User-Agent header's value, shared, never modified
	Middleware   []Middleware
	Logger       *slog.Logger
	Clock        retry.Clock
	ResponseInto **http.Response // the last answer received, when set
}

// Class says how a request may be retried.
type Class uint8

const (
	// Safe requests change nothing billable when repeated (GET, DELETE, a
	// storage PUT): retried on connection errors, 429, 500, 502, 503, 504.
	Safe Class = iota
	// Charging requests charge the balance: retried only when they cannot
	// have been received (no connection, a 429); never redirected.
	Charging
	// Once requests stream a body that cannot be sent again.
	Once
)

// Request is one exchange for [Engine.Do].
type Request struct {
	Method string
	URL    url.URL     // copied into each attempt
	Header http.Header // headers of this request's body (Content-Type), shared
	Body   []byte      // a body that can be sent again, or nil
	// Open, set instead of Body, returns each attempt's body and length (-1
	// unknown). A body whose Err method reports a failure ends the request
	// with it: the network is not to blame.
	Open     func() (io.ReadCloser, int64, error)
	Class    Class
	Storage  bool // to the storage host: no key, no API headers, no cookies
	Transfer bool // bounded by Call.Transfer rather than Call.Timeout

	// Acted is set by Do when a retried attempt may have taken effect (it
	// broke after sending, a gateway answered 5xx): a retried DELETE that
	// finds nothing knows why.
	Acted bool
}

// Engine sends requests for one client. It is safe for concurrent use.
type Engine struct {
	api     *http.Client
	storage *http.Client
	auth    []string // the Authorization header's value, shared, never modified
	traces  bool     // the transport is net/http's, which reports its progress
	watch   watchdog // bounds every attempt
	tel     *telemetry.T
}

// New returns an engine over hc's transport, redirect policy and cookie
// jar (none for the storage host). apiKey is every API request's
// Authorization; tel traces and counts each attempt.
func New(hc *http.Client, apiKey string, tel *telemetry.T) *Engine {
	return &Engine{
		api:     &http.Client{Transport: hc.Transport, CheckRedirect: apiRedirects(hc.CheckRedirect), Jar: hc.Jar},
		storage: &http.Client{Transport: hc.Transport, CheckRedirect: hc.CheckRedirect},
		auth:    []string{apiKey},
		traces:  traces(hc.Transport),
		tel:     tel,
	}
}

// Do sends r under call's settings, retrying what its class allows, and
// hands the answer not retried to handle, whatever its status; the engine
// drains and closes the body after. A transient error of handle (an answer
// cut short) is retried for a Safe request. Do returns handle's error, a
// [*SendError] when no answer came, or ctx.Err() once ctx ended.
func (e *Engine) Do(ctx context.Context, call *Call, r *Request, handle func(*http.Response) error) error {
	// Was a charging request sent? Did a retried DELETE act? The transport
	// traces it; a streamed body tells by being read.
	var tr *tracer
	if r.Class == Charging || r.Body == nil && r.Open == nil && r.Method != http.MethodGet && r.Method != http.MethodHead {
		tr = tracers.Get().(*tracer)
		defer tracers.Put(tr)
		// Middleware may send on a context without the trace.
		tr.start(!e.traces || len(call.Middleware) > 0)
		ctx = httptrace.WithClientTrace(ctx, &tr.trace)
	}
	var start time.Time // only a log line needs it
	if call.Logger.Enabled(ctx, slog.LevelWarn) || call.Logger.Enabled(ctx, slog.LevelDebug) {
		start = time.Now()
	}
	var last *http.Response   // the last answer received
	var pending *statusAnswer // a transient answer not yet read
	var failed error          // the last attempt's failure to get an answer
	err := retry.Do(ctx, call.Clock, call.Retry, func(n int) retry.Outcome {
		actx, span := e.tel.StartAttempt(ctx, r.Method, &r.URL, n)
		o := outcome{Outcome: retry.Outcome{Err: telemetry.ErrPanicked}} // until attempt returns: handle may call the caller's code
		defer func() { span.End(o.resp, o.Err) }()
		o = e.attempt(actx, call, r, tr, handle)
		failed = o.Err
		if o.resp != nil {
			last, failed = o.resp, nil
		}
		if sa, ok := o.Err.(*statusAnswer); ok {
			pending = sa
			r.Acted = r.Acted || sa.resp.StatusCode != http.StatusTooManyRequests
		}
		return o.Outcome
	}, func(err error, n int, wait time.Duration) {
		if pending != nil {
			pending.close() // retried: its connection is reused
			pending = nil
		}
		var se *SendError
		if errors.As(err, &se) && se.MaybeSent {
			r.Acted = true
		}
		e.tel.Retry(ctx, err, n+1)
		if call.Logger.Enabled(ctx, slog.LevelDebug) {
			call.Logger.LogAttrs(ctx, slog.LevelDebug, "mediagen: "+r.what()+" failed; retrying",
				slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("attempt", n+2), slog.Duration("wait", wait), slog.String("error", err.Error()))
		}
	})
	if pending != nil && ctx.Err() == nil {
		// The retries stopped on a transient answer: the caller reads it.
		herr := handle(pending.resp)
		var be *retry.BudgetError
		switch {
		case err == pending:
			err = herr
		case errors.As(err, &be) && be.Err == pending:
			be.Err = herr
		}
	}
	if pending != nil {
		pending.close()
	}
	if call.ResponseInto != nil && last != nil {
		*call.ResponseInto = last
	}
	if !start.IsZero() {
		logResult(ctx, call.Logger, r, start, last, failed)
	}
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// outcome is one attempt's result: what the loop reads, and the answer.
type outcome struct {
	retry.Outcome
	resp *http.Response
}

// attempt sends r once. It returns a transient answer unread, a
// *statusAnswer for the loop to retry or hand over, and reads any other
// with handle.
func (e *Engine) attempt(ctx context.Context, call *Call, r *Request, tr *tracer, handle func(*http.Response) error) outcome {
	if tr != nil {
		tr.reset()
	}
	d := call.Timeout
	if r.Transfer {
		d = call.Transfer
	}
	b := bound{ctx: ctx, slot: -1}
	if d > 0 {
		b = e.watch.watch(ctx, d)
	}
	req, body, err := e.newRequest(b.ctx, call, r)
	if err != nil {
		e.watch.release(b)
		return outcome{Outcome: retry.Outcome{Err: err}}
	}
	resp, err := e.send(call, r, req)
	if body != nil {
		body.close() // waits for a read in progress: the body is the caller's again
	}
	if err != nil {
		if b.timedOut() {
			err = &timeoutError{d: d}
		}
		e.watch.release(b)
		if body != nil {
			if be, ok := body.rc.(interface{ Err() error }); ok && be.Err() != nil {
				return outcome{Outcome: retry.Outcome{Err: be.Err()}} // the body's own failure
			}
		}
		// Without the URL (a signed one's query is its credential); and a
		// transport's error may quote the server (a malformed status line):
		// never the key.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if msg := err.Error(); redact.Carries([]byte(msg), e.auth[0]) {
			err = errors.New(redact.String(msg, e.auth[0]))
		}
		return outcome{Outcome: classifyError(r, progress{tr, body}, err)}
	}
	if after, ok := transientStatus(r, resp, call.Clock); ok {
		// Its deadline is released once it is drained.
		return outcome{Outcome: retry.Outcome{Err: &statusAnswer{resp: resp, w: &e.watch, b: b}, Retry: true, After: after}, resp: resp}
	}
	defer e.watch.release(b)
	defer drain(resp.Body)
	herr := handle(resp)
	return outcome{Outcome: retry.Outcome{Err: herr, Retry: r.Class == Safe && retry.Transient(herr)}, resp: resp}
}

// statusAnswer is a transient answer (429, or 5xx for a Safe request) the
// loop may retry; when not, handle reads it.
type statusAnswer struct {
	resp *http.Response
	w    *watchdog
	b    bound // the attempt's, released once the answer is drained
}

func (s *statusAnswer) close() {
	drain(s.resp.Body)
	s.w.release(s.b)
}

// StatusCode is the answer's, for a retry's reason.
func (s *statusAnswer) StatusCode() int { return s.resp.StatusCode }

func (s *statusAnswer) Error() string {
	return "answered " + strconv.Itoa(s.resp.StatusCode) + " " + http.StatusText(s.resp.StatusCode)
}

// drain reads up to 64 KiB left of a body, so its connection is reused,
// and closes it. A pooled buffer, as io.CopyN allocates on every call.
func drain(body io.ReadCloser) {
	bp := drainBufs.Get().(*[]byte)
	for n := 0; n < 64<<10; {
		m, err := body.Read(*bp)
		if n += m; err != nil {
			break
		}
	}
	drainBufs.Put(bp)
	_ = body.Close()
}

var drainBufs = sync.Pool{New: func() any { b := make([]byte, 4<<10); return &b }}

// newRequest builds one attempt of r, and returns its body to close.
func (e *Engine) newRequest(ctx context.Context, call *Call, r *Request) (*http.Request, *body, error) {
	req, err := http.NewRequestWithContext(ctx, r.Method, "", nil)
	if err != nil {
		return nil, nil, err
	}
	*req.URL = r.URL
	req.Host = r.URL.Host
	maps.Copy(req.Header, r.Header)
	if !r.Storage {
		for k, vs := range call.Header {
			req.Header[k] = append(req.Header[k], vs...)
		}
		req.Header["Authorization"] = e.auth
		req.Header["User-Agent"] = call.UserAgent
	}
	var b *body
	switch {
	case r.Open != nil:
		rc, n, err := r.Open()
		if err != nil {
			return nil, nil, err
		}
		b = &body{rc: rc}
		req.Body, req.ContentLength = b, n
	case r.Body != nil:
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(r.Body)), int64(len(r.Body))
		if r.Class == Safe {
			raw := r.Body
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
		}
		// Without GetBody a redirect cannot resend a charging body.
	}
	return req, b, nil
}

// body is an attempt's streamed body: read, it shows the request reached a
// connection.
type body struct {
	rc   io.ReadCloser
	read atomic.Bool
}

func (b *body) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.rc.Read(p)
}

// Close is the transport's: it may come while the attempt goes on.
func (b *body) Close() error { return nil }

func (b *body) close() { _ = b.rc.Close() }

// errNoAnswer is a middleware's return of neither a response nor an error.
var errNoAnswer = errors.New("mediagen: a middleware returned no response and no error")

// send runs the call's middleware around one attempt.
func (e *Engine) send(call *Call, r *Request, req *http.Request) (*http.Response, error) {
	hc := e.api
	if r.Storage {
		hc = e.storage
	}
	if len(call.Middleware) == 0 {
		return hc.Do(req)
	}
	reached := false
	next := func(req *http.Request) (*http.Response, error) {
		reached = true
		return hc.Do(req)
	}
	for _, mw := range slices.Backward(call.Middleware) {
		inner := next
		next = func(req *http.Request) (*http.Response, error) { return mw(req, inner) }
	}
	resp, err := next(req)
	if resp == nil && err == nil {
		err = errNoAnswer // a middleware's bug: fail the call, not the process
	}
	// A middleware that returns because the attempt's context ended was cut
	// short, not refusing.
	if err != nil && !reached && req.Context().Err() == nil {
		err = &refusedError{err: err}
	}
	return resp, err
}
