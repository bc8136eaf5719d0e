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
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

var noopTracer = noop.NewTracerProvider().Tracer(Scope)

// Attempt is the span of one HTTP attempt; the zero value is off.
type Attempt struct {
	span   trace.Span
	m      *Metrics
	ctx    context.Context
	method string
}

// StartAttempt starts the span of attempt n (0 for the first) of a request,
// with the HTTP client semantic conventions. url.full has no query: a
// signed storage URL's query is its credential.
func (t *T) StartAttempt(ctx context.Context, method string, u *url.URL, n int) (context.Context, Attempt) {
	s := t.Get()
	if s == nil {
		return ctx, Attempt{}
	}
	a := Attempt{m: s.Metrics, ctx: ctx, method: method}
	if s.Tracer == nil {
		return ctx, a
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	full := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	attrs := []attribute.KeyValue{
		attribute.String("http.request.method", method),
		attribute.String("server.address", host),
		attribute.String("url.full", full.String()),
	}
	if p, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, attribute.Int("server.port", p))
	}
	if n > 0 {
		attrs = append(attrs, attribute.Int("http.request.resend_count", n))
	}
	ctx, a.span = s.Tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	a.ctx = ctx
	return ctx, a
}

// End ends the attempt with its answer (nil when none came) or error.
func (a Attempt) End(resp *http.Response, err error) {
	if a.m == nil && a.span == nil {
		return
	}
	outcome := "ok"
	etype := ""
	switch {
	case resp != nil && resp.StatusCode >= 400:
		etype = strconv.Itoa(resp.StatusCode)
		outcome = "http_" + etype
	case resp == nil && err != nil:
		etype = errorType(err)
		outcome = etype
	}
	if a.m != nil {
		a.m.Requests.Add(a.ctx, 1, metric.WithAttributes(attribute.String("http.request.method", a.method), attribute.String("mediagen.outcome", outcome)))
	}
	if a.span == nil {
		return
	}
	if resp != nil {
		a.span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	}
	if etype != "" {
		a.span.SetAttributes(ErrorType.String(etype))
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
		s.Metrics.Retries.Add(ctx, 1, metric.WithAttributes(attribute.String("mediagen.reason", why)))
	}
	trace.SpanFromContext(ctx).AddEvent("retry", trace.WithAttributes(
		attribute.String("mediagen.reason", why), attribute.Int("http.request.resend_count", attempt)))
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
