package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/mediagen/mediagen-go/internal/retry"
)

// callClass says how a request may be retried.
type callClass int

const (
	// classSafe requests change nothing billable when repeated: GET, PUT,
	// DELETE and the upload-url reservation.
	classSafe callClass = iota
	// classCharging requests charge the balance: submitting a generation,
	// cloning a voice. They are resent only when provably not received.
	classCharging
)

// call is the per-request state the retry policy reads from the context.
type call struct {
	class callClass
	// traced is set once the current attempt asked the transport for a
	// connection: the transport reports its progress through httptrace, as
	// net/http's does. A transport that does not leaves sent false forever,
	// so sent alone cannot prove that a request never left.
	traced atomic.Bool
	// sent is set once the current attempt holds a connection: from then on
	// the request may have reached the service. Waiting for the transport's
	// WroteRequest instead would race with an early answer.
	sent atomic.Bool
	// acted is set when an attempt that was retried may have taken effect
	// (it broke after sending, or a gateway answered 5xx), so a retried
	// DELETE that finds nothing knows why.
	acted atomic.Bool
	// trace reports the transport's progress; allocated with the call.
	trace httptrace.ClientTrace
}

type callKey struct{}

// withCall marks ctx's request with its class and traces whether each attempt
// got as far as a connection, composing with any trace the caller installed.
func withCall(ctx context.Context, class callClass) (context.Context, *call) {
	st := &call{class: class}
	st.trace.GetConn = func(string) { st.traced.Store(true) }
	st.trace.GotConn = func(httptrace.GotConnInfo) { st.sent.Store(true) }
	ctx = context.WithValue(ctx, callKey{}, st)
	ctx = httptrace.WithClientTrace(ctx, &st.trace)
	return ctx, st
}

// mayHaveSent reports whether the current attempt, which failed with the
// transport error err, may have reached the service. When the transport
// traced its progress, no connection means nothing was sent. A transport
// that traces nothing is believed only when err says no connection was
// made (a failed dial or name lookup); any other failure may have come
// after the request left.
func (st *call) mayHaveSent(err error) bool {
	if refused(err) {
		return false
	}
	if st.sent.Load() {
		return true
	}
	if st.traced.Load() {
		return false
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return !(errors.As(err, &opErr) && opErr.Op == "dial" || errors.As(err, &dnsErr))
}

func callFrom(ctx context.Context) *call {
	st, _ := ctx.Value(callKey{}).(*call)
	return st
}

// retryPolicy is the billing-safe retry policy: which failures are retried
// and how long to wait. See the package documentation.
type retryPolicy struct {
	waitMax time.Duration
	clock   Clock // reads a Retry-After date
}

// CheckRetry decides whether an attempt is retried. Safe requests are retried
// on connection errors, 429, 500, 502, 503 and 504; charging requests only on 429 or a connection error that happened
// before a connection was obtained (the request cannot have been sent; see
// [call.mayHaveSent] for transports that do not say). A
// Retry-After longer than the maximum wait ends the retries, so the caller
// sees it instead of a long silent sleep.
func (p retryPolicy) CheckRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	st := callFrom(ctx)
	if st == nil {
		st = &call{class: classSafe}
	}
	if err != nil {
		if !retryableTransportError(err) {
			return false, nil
		}
		if st.mayHaveSent(err) {
			if st.class == classCharging {
				return false, nil // the service may have acted: the caller reconciles
			}
			st.acted.Store(true)
		}
		return true, nil
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if st.class == classCharging {
			return false, nil // the service may have acted: the caller reconciles
		}
	default:
		return false, nil
	}
	if d, ok := retry.After(resp, p.clock.Now()); ok && d > p.waitMax {
		return false, nil
	}
	if resp.StatusCode != http.StatusTooManyRequests {
		st.acted.Store(true)
	}
	return true, nil
}

// Backoff returns the wait before retry attemptNum (0 for the first retry):
// the answer's Retry-After when it has one, else an exponential step from
// min, capped at max, with the upper half jittered so that many clients
// failing together do not retry together.
func (p retryPolicy) Backoff(lo, hi time.Duration, attemptNum int, resp *http.Response) time.Duration {
	if d, ok := retry.After(resp, p.clock.Now()); ok {
		return d
	}
	return retry.Backoff(lo, hi, attemptNum)
}

// retryableTransportError is false for failures a retry cannot fix: bad
// certificates, an unsupported scheme, a redirect loop, a middleware that
// refused the request.
func retryableTransportError(err error) bool {
	if refused(err) {
		return false
	}
	var certErr *x509.UnknownAuthorityError
	var verifyErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) || errors.As(err, &verifyErr) {
		return false
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		msg := ue.Err.Error()
		for _, s := range []string{"unsupported protocol scheme", "stopped after", "invalid header", "certificate"} {
			if strings.Contains(msg, s) {
				return false
			}
		}
	}
	return true
}

// beforeAttempt runs before every attempt: it resets the flags that
// describe one attempt, and logs retries.
func (c *Client) beforeAttempt(_ retryablehttp.Logger, req *http.Request, attempt int) {
	if st := callFrom(req.Context()); st != nil {
		st.traced.Store(false)
		st.sent.Store(false)
	}
	if attempt > 0 {
		c.configOf(req.Context()).s.logger.LogAttrs(req.Context(), slog.LevelDebug, "mediagen: retrying",
			slog.String("method", req.Method), slog.String("path", req.URL.Path), slog.Int("attempt", attempt+1))
	}
}

// retryDoer sends an API request through go-retryablehttp with the
// billing-safe policy and the call's settings. Requests not marked by
// withCall are safe when their method is GET, HEAD, PUT or DELETE; a GET
// carries no call state, since nothing about its attempts matters later.
type retryDoer struct{ c *Client }

func (d retryDoer) Do(req *http.Request) (*http.Response, error) {
	rreq, err := retryablehttp.FromRequest(req)
	if err != nil {
		return nil, err
	}
	return d.c.retry(rreq)
}

// retry sends rreq with the billing-safe policy and the settings of the
// call its context carries.
func (c *Client) retry(rreq *retryablehttp.Request) (*http.Response, error) {
	req := rreq.Request
	ctx := req.Context()
	cfg := c.configOf(ctx)
	if callFrom(ctx) == nil && req.Method != http.MethodGet && req.Method != http.MethodHead {
		class := classSafe
		if req.Method == http.MethodPost || req.Method == http.MethodPatch {
			class = classCharging
		}
		ctx, _ = withCall(ctx, class)
		req = req.WithContext(ctx)
		rreq.Request = req
	}
	start := time.Now()
	resp, err := cfg.rc.Do(rreq)
	finish(cfg, req, start, resp, err)
	return resp, err
}

// onceDoer sends an API request exactly once, streaming its body: a
// multipart upload, bounded by the transfer timeout.
type onceDoer struct{ c *Client }

func (d onceDoer) Do(req *http.Request) (*http.Response, error) {
	cfg := d.c.configOf(req.Context())
	start := time.Now()
	resp, err := cfg.bulk.Do(req)
	finish(cfg, req, start, resp, err)
	return resp, err
}

// finish records a finished request for WithResponseInto and the logger.
func finish(cfg *config, req *http.Request, start time.Time, resp *http.Response, err error) {
	if resp != nil && cfg.s.responseInto != nil {
		*cfg.s.responseInto = resp
	}
	logResult(req, cfg.s.logger, start, resp, err)
}

// logResult logs one finished request without headers, query or body. The
// attributes are built only when the logger wants the record.
func logResult(req *http.Request, l *slog.Logger, start time.Time, resp *http.Response, err error) {
	ctx := req.Context()
	level, msg := slog.LevelDebug, "mediagen: request"
	switch {
	case err != nil:
		level, msg = slog.LevelWarn, "mediagen: request failed"
	case resp.StatusCode >= 500:
		level, msg = slog.LevelWarn, "mediagen: request answered with an error"
	}
	if !l.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", req.Method),
		slog.String("path", req.URL.Path),
		slog.Duration("duration", time.Since(start)),
	}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL would bring back the query
		}
		attrs = append(attrs, slog.String("error", err.Error()))
	} else {
		attrs = append(attrs, slog.Int("status", resp.StatusCode))
	}
	l.LogAttrs(ctx, level, msg, attrs...)
}

// attemptTimeout bounds each attempt of an API request, middleware
// included, from sending it to the end of reading its answer, by a deadline
// on the attempt's context; a redirect followed within the attempt gets a
// bound of its own. Unlike http.Client.Timeout it starts no goroutine: the
// deadline's timer is released when the body is read to its end or closed.
// A request that runs out of time fails with an error whose Timeout method
// reports true, as with http.Client.Timeout.
type attemptTimeout struct {
	next http.RoundTripper // nil for http.DefaultTransport
	d    time.Duration
}

func (t *attemptTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.d)
	resp, err := next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose releases an attempt's deadline once its body is read to the
// end or closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.cancel()
	}
	return n, err
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// middlewareTransport runs the caller's middleware around each attempt.
type middlewareTransport struct {
	next http.RoundTripper
	mw   []Middleware
}

func (t *middlewareTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	reached := false
	resp, err := t.run(0, req, next, &reached)
	// A middleware that returns because the attempt's context ended was
	// cut short by a timeout or the caller, not refusing.
	if err != nil && !reached && req.Context().Err() == nil {
		err = &refusedError{err: err}
	}
	return resp, err
}

func (t *middlewareTransport) run(i int, req *http.Request, base http.RoundTripper, reached *bool) (*http.Response, error) {
	if i == len(t.mw) {
		*reached = true
		return base.RoundTrip(req)
	}
	return t.mw[i](req, func(r *http.Request) (*http.Response, error) { return t.run(i+1, r, base, reached) })
}

// refusedError is the error of a middleware that failed an attempt without
// calling next: the request never left, so it is neither retried nor
// searched for; the caller sees the middleware's error.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }

func (e *refusedError) Unwrap() error { return e.err }

// refused reports whether a middleware failed the request before sending it.
func refused(err error) bool {
	var re *refusedError
	return errors.As(err, &re)
}
