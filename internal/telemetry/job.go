package telemetry

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of the SDK's spans.
const (
	Feature    = attribute.Key("mediagen.feature")
	Kind       = attribute.Key("mediagen.kind")
	ID         = attribute.Key("mediagen.generation.id")
	Status     = attribute.Key("mediagen.status")
	Charged    = attribute.Key("mediagen.cost.charged")
	Refunded   = attribute.Key("mediagen.cost.refunded")
	Retries    = attribute.Key("mediagen.retries")
	EndedBy    = attribute.Key("mediagen.wait.ended_by")
	KeyHash    = attribute.Key("mediagen.idempotency_key.sha256")
	Reused     = attribute.Key("mediagen.reused")
	ErrorType  = attribute.Key("error.type")
	jobSpan    = "mediagen.generation"
	resumeSpan = "mediagen.generation.resume"
	maxJobs    = 10_000 // about 1 KB each, with the span
	endedByHub = "webhook"
)

// Job is the root span of one generation, from submit to its terminal
// state and save, and what its metrics need.
type Job struct {
	ctx     context.Context // carries the span
	span    trace.Span
	m       *Metrics
	start   time.Time
	feature string
	keyHash string // the idempotency key's SHA-256

	mu        sync.Mutex
	retries   int
	reused    bool // a keyed call handed back a recorded generation
	charged   float64
	kind      string
	id        string
	endedBy   string
	seen      time.Time // when it was first seen terminal, the duration's end
	done      bool
	exchanged bool // a delivery another replica's hub shared is linked
	shared    bool // Watched handed out the job's trace context
}

type jobKey struct{}

// jobs are the open jobs of this process by generation id, so a wait, a
// save or a webhook delivery joins the job whichever client runs it.
var jobs = struct {
	sync.Mutex
	m     map[string]*Job
	order []string
	ended map[string]bool // the ids of jobs finished here, so Observe counts each once
	done  []string        // ended's ids, oldest first
}{m: map[string]*Job{}, ended: map[string]bool{}}

// StartJob starts the job of a generation of feature under ctx's span, or,
// without one, under the trace context remote (a traceparent recorded in
// the journal), which it links to as well, as a resume span (one job root
// per trace). It returns nil when off.
func (t *T) StartJob(ctx context.Context, feature, remote, key string) (context.Context, *Job) {
	s := t.Get()
	if s == nil {
		return ctx, nil
	}
	j := &Job{m: s.Metrics, start: time.Now(), feature: feature}
	var opts []trace.SpanStartOption
	name := jobSpan
	if sc := Parse(remote); sc.IsValid() {
		name = resumeSpan
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
		if !trace.SpanContextFromContext(ctx).IsValid() {
			ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
		}
	}
	tr := s.Tracer
	if tr == nil {
		tr = noopTracer
	}
	ctx, j.span = tr.Start(ctx, name, opts...)
	if key != "" && j.span.IsRecording() {
		sum := sha256.Sum256([]byte(key))
		j.keyHash = hex.EncodeToString(sum[:])
	}
	j.ctx = context.WithValue(ctx, jobKey{}, j)
	return j.ctx, j
}

// Context returns ctx with the job's span and the job, so the spans
// started under it are the job's children.
func (j *Job) Context(ctx context.Context) context.Context {
	if j == nil {
		return ctx
	}
	return context.WithValue(trace.ContextWithSpan(ctx, j.span), jobKey{}, j)
}

// Traceparent returns the job's trace context in W3C form, "" when off.
func (j *Job) Traceparent() string {
	if j == nil {
		return ""
	}
	return traceparent(j.span)
}

func traceparent(sp trace.Span) string {
	if !sp.SpanContext().IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpan(context.Background(), sp), c)
	return c["traceparent"]
}

// Parse reads a W3C traceparent; an invalid span context when it is not one.
func Parse(traceparent string) trace.SpanContext {
	if traceparent == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
	return trace.SpanContextFromContext(ctx)
}

// JobFrom returns the job ctx is in, or nil.
func JobFrom(ctx context.Context) *Job {
	j, _ := ctx.Value(jobKey{}).(*Job)
	return j
}

// Lookup returns the open job of generation id, or nil.
func Lookup(id string) *Job {
	jobs.Lock()
	defer jobs.Unlock()
	return jobs.m[id]
}

// Created records the generation the job submitted (or was handed back)
// and registers the job under its id; err ends the job as failed.
func (j *Job) Created(id, kind string, cost float64, err error) {
	if j == nil {
		return
	}
	if err != nil { // its class, not its text: that may name the key
		j.attrs(ErrorType.String(errorType(err)))
		j.span.SetStatus(codes.Error, "submit failed")
		j.span.End()
		return
	}
	j.mu.Lock()
	j.id, j.kind = id, kind
	reused := j.reused
	if !reused {
		j.charged = cost
	}
	j.mu.Unlock()
	j.attrs(ID.String(id), Kind.String(kind), Reused.Bool(reused))
	var dropped []*Job
	jobs.Lock()
	_, open := jobs.m[id]
	if !open {
		if len(jobs.order) >= 2*maxJobs { // mostly ids of finished jobs
			jobs.order = slices.DeleteFunc(jobs.order, func(id string) bool { return jobs.m[id] == nil })
		}
		jobs.order = append(jobs.order, id)
		jobs.m[id] = j
		for len(jobs.m) > maxJobs {
			if old, ok := jobs.m[jobs.order[0]]; ok {
				dropped = append(dropped, old)
				delete(jobs.m, jobs.order[0])
			}
			jobs.order = jobs.order[1:]
		}
	}
	jobs.Unlock()
	for _, old := range dropped {
		old.end("untracked")
	}
	if open { // the job open for it here counts it; this one just ends
		j.end("")
		return
	}
	if !reused && j.m != nil {
		a := set(Feature, j.feature, "", "").add
		j.m.Submitted.Add(j.ctx, 1, a...)
		j.m.Charged.Add(j.ctx, cost, a...)
	}
}

// Release ends the open job of generation id as one this process hands to
// another (a queue's snooze): a "released" event, no status, not counted
// as finished. Whoever takes it next continues its trace (see Observe).
func Release(id string) { drop(id, "released") }

// Gone ends the open job of generation id, which the service no longer
// knows (deleted or expired): a "gone" event, no status, not counted.
func Gone(id string) { drop(id, "gone") }

func drop(id, event string) {
	jobs.Lock()
	j := jobs.m[id]
	delete(jobs.m, id)
	jobs.Unlock()
	if j != nil {
		j.end(event)
	}
}

// Observe ends the job of a generation the caller found terminal: the open
// one here, or else a resume span that continues ctx's span context (an
// earlier attempt's job), started now; since is when it was requested.
// Either way it counts as finished once here.
func (t *T) Observe(ctx context.Context, id, feature, kind, status string, cost float64, since time.Time) {
	refunded := status != "done"
	jobs.Lock()
	j, ended := jobs.m[id], jobs.ended[id]
	jobs.Unlock()
	if j != nil || ended {
		j.Finish(status, refunded, "") // nil (ended here already) does nothing
		return
	}
	s := t.Get()
	if s == nil {
		return
	}
	if since.IsZero() {
		since = time.Now()
	}
	j = &Job{m: s.Metrics, start: since, feature: feature, id: id, kind: kind, charged: cost}
	tr := s.Tracer
	if tr == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		tr = noopTracer
	}
	j.ctx, j.span = tr.Start(ctx, resumeSpan)
	j.attrs(ID.String(id), Kind.String(kind))
	j.Finish(status, refunded, "")
}

// end ends the job's span once, with no status and with event when not ""
// ("untracked": pushed out by newer jobs; "released"; "gone").
func (j *Job) end(event string) {
	if !j.mark(&j.done) {
		return
	}
	if event != "" {
		j.span.AddEvent(event)
	}
	j.span.End()
}

// mark sets one of the job's flags and reports whether it was unset.
func (j *Job) mark(flag *bool) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	was := *flag
	*flag = true
	return !was
}

// attrs sets the job's first attributes with more, in one call: each call
// grows the span's list.
func (j *Job) attrs(more ...attribute.KeyValue) {
	if !j.span.IsRecording() {
		return
	}
	kv := make([]attribute.KeyValue, 0, 1+b2i(j.keyHash != "")+len(more))
	kv = append(kv, Feature.String(j.feature))
	if j.keyHash != "" {
		kv = append(kv, KeyHash.String(j.keyHash))
	}
	j.span.SetAttributes(append(kv, more...)...)
}

// MarkReused records that a keyed call handed back the generation the
// journal recorded, which charged nothing now.
func MarkReused(ctx context.Context) {
	if j := JobFrom(ctx); j != nil {
		j.mark(&j.reused)
	}
}

// Retried counts a retry of a request of the job ctx is in.
func Retried(ctx context.Context) {
	if j := JobFrom(ctx); j != nil {
		j.mu.Lock()
		j.retries++
		j.mu.Unlock()
	}
}

// Finish ends the job at status, refunded as the service does for error
// and timeout, once; endedBy is "webhook", "poll" or "" (seen otherwise).
func (j *Job) Finish(status string, refunded bool, endedBy string) {
	if j == nil {
		return
	}
	j.mu.Lock()
	if j.done {
		j.mu.Unlock()
		return
	}
	j.done = true
	j.endedBy = cmp.Or(endedBy, j.endedBy)
	charged, retries, kind, reused := j.charged, j.retries, j.kind, j.reused
	eb, seen := j.endedBy, j.seen
	j.mu.Unlock()
	if seen.IsZero() {
		seen = time.Now()
	}
	refund := 0.0
	if refunded {
		refund = charged
	}
	if j.span.IsRecording() {
		attrs := append(make([]attribute.KeyValue, 0, 6), Status.String(status),
			Charged.Float64(charged), Refunded.Float64(refund), Retries.Int(retries))
		if eb != "" {
			attrs = append(attrs, EndedBy.String(eb))
		}
		if refunded {
			attrs = append(attrs, ErrorType.String("generation_"+status))
		}
		j.span.SetAttributes(attrs...)
	}
	if refunded {
		j.span.SetStatus(codes.Error, "generation ended in "+status)
	}
	if j.m != nil && !reused {
		j.m.Finished.Add(j.ctx, 1, set(Feature, j.feature, Status, status).add...)
		j.m.Duration.Record(j.ctx, seen.Sub(j.start).Seconds(), set(Kind, kind, "", "").rec...)
		if refund > 0 {
			j.m.Refunded.Add(j.ctx, refund, set(Feature, j.feature, "", "").add...)
		}
	}
	j.span.End()
	jobs.Lock()
	delete(jobs.m, j.id)
	if j.id != "" && !jobs.ended[j.id] {
		jobs.ended[j.id] = true
		jobs.done = append(jobs.done, j.id)
		if n := len(jobs.done) - maxJobs; n > 0 {
			for _, id := range jobs.done[:n] {
				delete(jobs.ended, id)
			}
			jobs.done = jobs.done[n:] // append copies only the live ids when it grows
		}
	}
	jobs.Unlock()
}

// Ended records what first ended the job's wait ("" for no wait: a save
// began), and when: the save after it is no part of the duration.
func (j *Job) Ended(by string) {
	if j != nil {
		j.mu.Lock()
		j.endedBy = cmp.Or(j.endedBy, by)
		if j.seen.IsZero() {
			j.seen = time.Now()
		}
		j.mu.Unlock()
	}
}
