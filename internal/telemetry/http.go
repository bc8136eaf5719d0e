package telemetry

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

var noopTracer = noop.NewTracerProvider().Tracer(Scope)

// ErrPanicked is what a span ends with when a callback of the caller's (an
// OnUpdate, an OpenFunc) panicked through it, so the span still ends.
var ErrPanicked = errors.New("mediagen: a callback panicked")

// Attempt is the span of one HTTP attempt; the zero value is off.
type Attempt struct {
	span   trace.Span
	m      *Metrics
	ctx    context.Context
	method string
	host   host
	full   string // url.full
	n      int
}

// Attribute keys of the HTTP attempt spans and their metrics.
const (
	methodKey  = attribute.Key("http.request.method")
	outcomeKey = attribute.Key("mediagen.outcome")
	reasonKey  = attribute.Key("mediagen.reason")
)

var clientKind = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}

// hosts caches the server.address and server.port attributes and the
// url.full prefix of each scheme and host.
var hosts = cache[[2]string, host]{m: map[[2]string]host{}}

type host struct {
	prefix string
	addr   attribute.KeyValue
	port   attribute.KeyValue // invalid when the port is not a number
}

func hostOf(u *url.URL) host {
	return hosts.get([2]string{u.Scheme, u.Host}, func() host {
		port := u.Port()
		if port == "" {
			port = "443"
			if u.Scheme == "http" {
				port = "80"
			}
		}
		h := host{prefix: u.Scheme + "://" + u.Host, addr: attribute.String("server.address", u.Hostname())}
		if p, err := strconv.Atoi(port); err == nil {
			h.port = attribute.Int("server.port", p)
		}
		return h
	})
}

// StartAttempt starts the span of attempt n (0 for the first) of a request,
// with the HTTP client conventions. url.full has no query: a signed storage
// URL's query is its credential.
func (t *T) StartAttempt(ctx context.Context, method string, u *url.URL, n int) (context.Context, Attempt) {
	s := t.Get()
	if s == nil {
		return ctx, Attempt{}
	}
	a := Attempt{m: s.Metrics, ctx: ctx, method: method, n: n}
	if s.Tracer == nil {
		return ctx, a
	}
	ctx, a.span = s.Tracer.Start(ctx, method, clientKind...)
	a.ctx = ctx
	if a.span.IsRecording() { // u is not kept: that would move the request to the heap
		a.host = hostOf(u)
		a.full = a.host.prefix + u.EscapedPath()
	}
	return ctx, a
}

// End ends the attempt with its answer (nil when none came) or error.
func (a Attempt) End(resp *http.Response, err error) {
	if a.m == nil && a.span == nil {
		return
	}
	result := "ok"
	etype := ""
	switch {
	case resp != nil && resp.StatusCode >= 400:
		etype = strconv.Itoa(resp.StatusCode)
		result = "http_" + etype
	case err != nil: // no answer, or one cut short or unreadable
		etype = errorType(err)
		result = etype
	}
	if a.m != nil {
		a.m.Requests.Add(a.ctx, 1, set(methodKey, a.method, outcomeKey, result).add...)
	}
	if a.span == nil {
		return
	}
	if a.span.IsRecording() {
		n := 3 + b2i(a.host.port.Valid()) + b2i(a.n > 0) + b2i(resp != nil) + b2i(etype != "")
		attrs := append(make([]attribute.KeyValue, 0, n), // exact: each takes 64 bytes
			methodKey.String(a.method), a.host.addr, attribute.String("url.full", a.full))
		if a.host.port.Valid() {
			attrs = append(attrs, a.host.port)
		}
		if a.n > 0 {
			attrs = append(attrs, attribute.Int("http.request.resend_count", a.n))
		}
		if resp != nil {
			attrs = append(attrs, attribute.Int("http.response.status_code", resp.StatusCode))
		}
		if etype != "" {
			attrs = append(attrs, ErrorType.String(etype))
		}
		a.span.SetAttributes(attrs...)
	}
	if etype != "" {
		a.span.SetStatus(codes.Error, "")
	}
	a.span.End()
}

// Retry records a retry of the request in ctx's span (the job's, a
// wait's or the caller's) with its reason, and counts it.
func (t *T) Retry(ctx context.Context, reason error, attempt int) {
	s := t.Get()
	if s == nil {
		return
	}
	why := errorType(reason)
	if st, ok := reason.(interface{ StatusCode() int }); ok {
		why = strconv.Itoa(st.StatusCode())
	}
	Retried(ctx)
	if s.Metrics != nil {
		s.Metrics.Retries.Add(ctx, 1, set(reasonKey, why, "", "").add...)
	}
	if sp := trace.SpanFromContext(ctx); sp.IsRecording() {
		sp.AddEvent("retry", trace.WithAttributes(reasonKey.String(why), attribute.Int("http.request.resend_count", attempt)))
	}
}

// errorType names an error's class for error.type: never its text, which
// may quote a server.
func errorType(err error) string {
	var ne net.Error
	var typed interface{ ErrorType() string }
	switch {
	case errors.As(err, &typed):
		return typed.ErrorType()
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.As(err, &ne):
		return "connection"
	}
	return "_OTHER"
}
