package engine

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediagen/mediagen-go/internal/retry"
)

// tracer learns through httptrace how far an attempt got. A transport that
// does not trace leaves traced false: sent alone cannot prove a request
// never left.
type tracer struct {
	traced  atomic.Bool // the attempt asked for a connection
	sent    atomic.Bool // the attempt holds one: it may have reached the service
	unknown bool        // the transport may not trace: traced must be seen
	trace   httptrace.ClientTrace
	getConn func(string)
	gotConn func(httptrace.GotConnInfo)
}

// newTracer returns a tracer whose hooks are made once: tracers are pooled.
func newTracer() *tracer {
	t := &tracer{}
	t.getConn = func(string) { t.traced.Store(true) }
	// Waiting for WroteRequest instead would race with an early answer.
	t.gotConn = func(httptrace.GotConnInfo) { t.sent.Store(true) }
	return t
}

var tracers = sync.Pool{New: func() any { return newTracer() }}

// start readies t for a call; unknown (a transport that may not trace) adds
// the hook that tells whether it does. Hooks are set afresh: WithClientTrace
// chains a caller's own into them.
func (t *tracer) start(unknown bool) {
	t.unknown = unknown
	t.trace = httptrace.ClientTrace{GotConn: t.gotConn}
	if unknown {
		t.trace.GetConn = t.getConn
	}
	t.reset()
}

func (t *tracer) reset() {
	t.traced.Store(!t.unknown)
	t.sent.Store(false)
}

// traces reports whether rt is net/http's, known to report through httptrace.
func traces(rt http.RoundTripper) bool {
	_, ok := rt.(*http.Transport)
	return ok || rt == nil
}

// progress shows how far an attempt got: its body, read or not, or the
// trace of a bodiless request; either may be nil.
type progress struct {
	tr   *tracer
	body *body
}

// mayHaveSent reports whether an attempt that failed with err may have
// reached the service: not with a body never read or no traced connection,
// nor after a failed dial or name lookup.
func (p progress) mayHaveSent(err error) bool {
	if refused(err) {
		return false
	}
	if p.body != nil {
		return p.body.read.Load()
	}
	if t := p.tr; t != nil && (t.sent.Load() || t.traced.Load()) {
		return t.sent.Load()
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return !(errors.As(err, &opErr) && opErr.Op == "dial" || errors.As(err, &dnsErr))
}

// SendError is a request that got no answer: the connection failed, timed
// out, or a middleware refused it.
type SendError struct {
	Err error
	// MaybeSent: the request may have reached the service, so a charging
	// one may have been accepted.
	MaybeSent bool
	transient bool
}

// Error is the transport's, without the URL: a signed one's query is its
// credential.
func (e *SendError) Error() string { return e.Err.Error() }

func (e *SendError) Unwrap() error { return e.Err }

// ErrorType names the failure for telemetry.
func (e *SendError) ErrorType() string {
	if e.MaybeSent {
		return "connection_after_send"
	}
	return "connection"
}

// Transient reports whether sending again may succeed.
func (e *SendError) Transient() bool { return e.transient }

// classifyError judges an attempt that got no answer.
func classifyError(r *Request, p progress, err error) retry.Outcome {
	se := &SendError{Err: err, MaybeSent: p.mayHaveSent(err), transient: retryableTransportError(err)}
	var re *RedirectError
	if errors.As(err, &re) {
		// Answered, with a redirect: not accepted, unless a 303 (See
		// Other), which answers a POST it processed (RFC 9110).
		se.MaybeSent = re.status == http.StatusSeeOther
	}
	o := retry.Outcome{Err: se}
	switch r.Class {
	case Safe:
		o.Retry = se.transient
	case Charging:
		// Sent once it may have been received: the caller reconciles.
		o.Retry = se.transient && !se.MaybeSent
	}
	return o
}

// transientStatus reports whether to retry an answer, and the wait it asks
// for: 429 for every class that may resend; 500, 502, 503, 504 for Safe
// only, since a charging request they answer may have been accepted.
// The clock is read only then: a Retry-After date needs it.
func transientStatus(r *Request, resp *http.Response, clock retry.Clock) (time.Duration, bool) {
	switch {
	case r.Class == Once:
		return 0, false
	case resp.StatusCode == http.StatusTooManyRequests:
	case r.Class == Safe && retry.TransientStatus(resp.StatusCode):
	default:
		return 0, false
	}
	after, _ := retry.After(resp, clock.Now())
	return after, true
}

// retryableTransportError is false for failures a retry cannot fix: bad
// certificates, an unsupported scheme, a redirect loop, a refusing middleware.
func retryableTransportError(err error) bool {
	var re *RedirectError
	if refused(err) || errors.Is(err, context.Canceled) || errors.As(err, &re) {
		return false
	}
	var certErr *x509.UnknownAuthorityError
	var verifyErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) || errors.As(err, &verifyErr) {
		return false
	}
	final := []string{"unsupported protocol scheme", "stopped after", "invalid header", "certificate"}
	return !slices.ContainsFunc(final, func(s string) bool { return strings.Contains(err.Error(), s) })
}

// refusedError is a middleware's failure without calling next: the request
// never left, so it is neither retried nor searched for.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }

func (e *refusedError) Unwrap() error { return e.err }

func refused(err error) bool {
	var re *refusedError
	return errors.As(err, &re)
}

// what names r in logs.
func (r *Request) what() string {
	switch {
	case r.Storage && r.Method == http.MethodGet:
		return "download"
	case r.Storage:
		return "storage " + r.Method
	}
	return r.Method + " " + r.URL.Path
}

// RedirectError is an API request not let follow a redirect: to another
// origin (scheme, host, port) the key would go along, and a POST is
// answered where it was sent or not at all, never from elsewhere.
type RedirectError struct {
	Method   string
	From, To string // origins
	status   int    // of the redirect
}

func (e *RedirectError) Error() string {
	if e.From == e.To {
		return "mediagen: " + e.Method + " answered with a redirect; not followed, so it is answered where it was sent or not at all"
	}
	return "mediagen: redirected from " + e.From + " to " + e.To + "; not followed: the API key stays with the service's origin"
}

// apiRedirects is API requests' redirect policy: [RedirectError]'s rules,
// then next, the caller's (net/http's default when nil).
func apiRedirects(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0]
		from, to := origin(first.URL), origin(req.URL)
		if first.Method == http.MethodPost || from != to {
			re := &RedirectError{Method: first.Method, From: from, To: to}
			if req.Response != nil {
				re.status = req.Response.StatusCode
			}
			return re
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// origin is a URL's scheme, host and port, the port spelled out.
func origin(u *url.URL) string {
	port := cmp.Or(u.Port(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// logResult logs one finished request without headers, query or body.
func logResult(ctx context.Context, l *slog.Logger, r *Request, start time.Time, resp *http.Response, err error) {
	level, msg := slog.LevelDebug, "mediagen: request"
	switch {
	case err != nil:
		level, msg = slog.LevelWarn, "mediagen: request failed"
	case resp != nil && resp.StatusCode >= 500:
		level, msg = slog.LevelWarn, "mediagen: request answered with an error"
	}
	if !l.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Duration("duration", time.Since(start))}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	} else if resp != nil {
		attrs = append(attrs, slog.Int("status", resp.StatusCode))
	}
	l.LogAttrs(ctx, level, msg, attrs...)
}
