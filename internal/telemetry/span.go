package telemetry

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of the searches and deliveries.
const (
	searchResult = attribute.Key("mediagen.search.result")
	resultKey    = attribute.Key("mediagen.result") // a webhook delivery's
)

// Span is a span of the SDK (a search, a save, a delivery) and the
// metrics of its job; the zero value is off.
type Span struct {
	span trace.Span
	m    *Metrics
	job  *Job
	ctx  context.Context
}

// child starts a span named name, with generation id ("" for none), under
// the job j with its providers, or else under ctx's span (a remote one too)
// with t's. The id's attribute is made only for a span that records: an
// off one allocates nothing.
func (t *T) child(ctx context.Context, j *Job, name, id string) (context.Context, Span) {
	var tp trace.TracerProvider
	sp := Span{job: j}
	if j != nil {
		ctx = j.Context(ctx)
		sp.m, tp = j.m, j.span.TracerProvider()
	} else if s := t.Get(); s != nil {
		sp.m = s.Metrics
		if s.Tracer != nil {
			tp = s.tp
		}
	}
	sp.ctx = ctx
	if parent := trace.SpanFromContext(ctx); tp == nil || !parent.IsRecording() && (j != nil || !parent.SpanContext().IsValid()) {
		return ctx, sp
	}
	var opts []trace.SpanStartOption
	if id != "" {
		opts = append(opts, trace.WithAttributes(ID.String(id)))
	}
	ctx, sp.span = tp.Tracer(Scope).Start(ctx, name, opts...)
	sp.ctx = ctx
	return ctx, sp
}

// end ends the span, recording err with its error.type.
func (s Span) end(err error) {
	if s.span == nil {
		return
	}
	if err != nil {
		s.span.RecordError(err)
		s.span.SetAttributes(ErrorType.String(errorType(err)))
		s.span.SetStatus(codes.Error, "")
	}
	s.span.End()
}

// StartSearch starts the span of a search for the row an ambiguous
// attempt may have created.
func StartSearch(ctx context.Context) (context.Context, Span) {
	j := JobFrom(ctx)
	if j == nil {
		return ctx, Span{}
	}
	return (*T)(nil).child(ctx, j, "mediagen.search", "")
}

// EndSearch ends a search span with what it found, and counts it.
func (s Span) EndSearch(found bool, err error) {
	result := "none"
	switch {
	case err != nil:
		result = "failed"
	case found:
		result = "found"
	}
	if s.m != nil {
		s.m.Searches.Add(s.ctx, 1, set(searchResult, result, "", "").add...)
	}
	if s.span != nil {
		s.span.SetAttributes(searchResult.String(result))
		if found {
			s.span.AddEvent("found")
		}
	}
	s.end(err)
}

// StartSave starts the span of the save of generation id's outputs, a
// child of its job when that is open in this process, else of ctx's span,
// a remote one too (a queue's earlier attempt), with t's tracer.
func (t *T) StartSave(ctx context.Context, id string) (context.Context, Span) {
	j := JobFrom(ctx)
	if j == nil || j.id != id {
		j = Lookup(id)
	}
	j.Ended("") // a save needs a done generation: it was seen terminal by now
	return t.child(ctx, j, "mediagen.save", id)
}

// EndSave ends a save span; a save that worked ends its job, done.
func (s Span) EndSave(err error) {
	s.end(err)
	if err == nil {
		s.job.Finish("done", false, "")
	}
}

// Delivered counts a verified webhook delivery for generation id ("" for a
// voice) and records its span, linked to the open job here or else to
// remote (see Watched). It returns the span's traceparent, "" for none,
// for the hub to share (see Exchanged).
func Delivered(ctx context.Context, id, remote string) string {
	j := Lookup(id)
	var m *Metrics
	tp := trace.SpanFromContext(ctx).TracerProvider()
	if j != nil {
		m, tp = j.m, j.span.TracerProvider()
	} else if s := Global.Get(); s != nil {
		m = s.Metrics
		if s.Tracer != nil {
			tp = s.tp
		}
	}
	if m != nil {
		m.Deliveries.Add(ctx, 1, set(resultKey, "verified", "", "").add...)
	}
	if placeholder(tp) {
		return ""
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)}
	if id != "" {
		opts = append(opts, trace.WithAttributes(ID.String(id)))
	}
	if j != nil {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: j.span.SpanContext()}))
	} else if sc := Parse(remote); sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	_, sp := tp.Tracer(Scope).Start(ctx, "mediagen.webhook.deliver", opts...)
	sp.End()
	return traceparent(sp)
}

// Exchanged records on the open job of generation id that a delivery
// another replica's hub took ended it: a link to that delivery's span
// (traceparent tp) and a "webhook" event. Each hub reading the exchange
// reports it; only the first counts.
func Exchanged(id, tp string) {
	j, sc := Lookup(id), Parse(tp)
	if j == nil || !sc.IsValid() {
		return
	}
	if j.mark(&j.exchanged) && j.span.IsRecording() {
		j.span.AddLink(trace.Link{SpanContext: sc})
		j.span.AddEvent("webhook", trace.WithAttributes(attribute.Bool("mediagen.webhook.exchanged", true)))
	}
}

// Watched returns the traceparent of generation id's open, recording job
// the first time a hub that shares events watches it, else "": the replica
// the webhook lands on links its delivery to it (see Delivered).
func Watched(id string) string {
	j := Lookup(id)
	if j == nil || !j.span.IsRecording() || !j.mark(&j.shared) {
		return ""
	}
	return traceparent(j.span)
}

// checks are the options of a check event, not terminal and terminal.
var checks = [2][]trace.EventOption{
	{trace.WithAttributes(attribute.Bool("mediagen.terminal", false))},
	{trace.WithAttributes(attribute.Bool("mediagen.terminal", true))},
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Delivery counts a webhook delivery that no job sees: refused or a
// duplicate (result), with the global meter provider.
func Delivery(ctx context.Context, result string) {
	if s := Global.Get(); s != nil && s.Metrics != nil {
		s.Metrics.Deliveries.Add(ctx, 1, set(resultKey, result, "", "").add...)
	}
}

// Wait is the span of one wait for a generation, with an event per
// check; nil is off.
type Wait struct {
	Span
	once sync.Once
}

// StartWait starts the span of a wait for generation id, a child of its
// job when that is open in this process, else of ctx's span with t's
// providers (a client's).
func (t *T) StartWait(ctx context.Context, id string) (context.Context, *Wait) {
	ctx, sp := t.child(ctx, Lookup(id), "mediagen.wait", id)
	if sp.span == nil && sp.m == nil && sp.job == nil {
		return ctx, nil
	}
	return ctx, &Wait{Span: sp}
}

// Check records a check of the generation: whether it was terminal.
func (w *Wait) Check(terminal bool) {
	if w != nil && w.span != nil {
		w.span.AddEvent("check", checks[b2i(terminal)]...)
	}
}

// End ends the wait, which a webhook event or a poll ended, and counts it.
func (w *Wait) End(byEvent bool) {
	if w == nil {
		return
	}
	w.once.Do(func() {
		by := "poll"
		if byEvent {
			by = endedByHub
		}
		w.job.Ended(by)
		if w.m != nil {
			w.m.Waits.Add(w.ctx, 1, set(EndedBy, by, "", "").add...)
		}
		if w.span != nil {
			if byEvent {
				w.span.AddEvent("webhook")
			}
			w.span.SetAttributes(EndedBy.String(by))
			w.span.End()
		}
	})
}

// Close ends a wait that gave up with err; after End it does nothing.
func (w *Wait) Close(err error) {
	if w != nil {
		w.once.Do(func() { w.end(err) })
	}
}
