// Package telemetry holds the SDK's OpenTelemetry instruments and the spans
// of requests and whole jobs. Providers are a client's own or else the
// global ones, read at each use as otelhttp does. While both are
// OpenTelemetry's placeholders every helper returns at once and allocates
// nothing.
package telemetry

import (
	"reflect"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Scope names the SDK's tracer and meter.
const Scope = "github.com/mediagen/mediagen-go"

// T is one client's telemetry. The zero value uses the global providers.
type T struct {
	TP  trace.TracerProvider // nil: the global one
	MP  metric.MeterProvider // nil: the global one
	cur atomic.Pointer[State]
}

// State is the tracer and instruments of one pair of providers; a nil
// Tracer or Metrics is off.
type State struct {
	tp      trace.TracerProvider
	mp      metric.MeterProvider
	Tracer  trace.Tracer
	Metrics *Metrics
}

// Get returns the current state, nil when both traces and metrics are off.
func (t *T) Get() *State {
	if t == nil {
		return nil
	}
	tp, mp := t.TP, t.MP
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	s := t.cur.Load()
	if s == nil || !same(s.tp, tp) || !same(s.mp, mp) {
		s = &State{tp: tp, mp: mp}
		if !placeholder(tp) {
			s.Tracer = tp.Tracer(Scope)
		}
		if !placeholder(mp) {
			s.Metrics = newMetrics(mp.Meter(Scope))
		}
		t.cur.Store(s)
	}
	if s.Tracer == nil && s.Metrics == nil {
		return nil
	}
	return s
}

// same compares two providers without panicking on an incomparable one.
func same(a, b any) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta != nil && ta.Comparable() && a == b
}

// placeholder reports whether p is one of OpenTelemetry's stand-ins: the
// global provider before one is set, or a noop one.
func placeholder(p any) bool {
	if p == nil {
		return true
	}
	t := reflect.TypeOf(p)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.PkgPath() {
	case "go.opentelemetry.io/otel/internal/global", "go.opentelemetry.io/otel/trace/noop",
		"go.opentelemetry.io/otel/metric/noop", "go.opentelemetry.io/otel/trace":
		return true
	}
	return false
}

// Metrics are the SDK's instruments; names and meanings are in the README.
type Metrics struct {
	Submitted, Finished metric.Int64Counter
	Duration            metric.Float64Histogram
	Charged, Refunded   metric.Float64Counter
	Requests, Retries   metric.Int64Counter
	Searches, Waits     metric.Int64Counter
	Deliveries          metric.Int64Counter
}

func newMetrics(m metric.Meter) *Metrics {
	var x Metrics
	x.Submitted, _ = m.Int64Counter("mediagen.generations.submitted", metric.WithDescription("Generations submitted (charged), by feature."))
	x.Finished, _ = m.Int64Counter("mediagen.generations.finished", metric.WithDescription("Generations seen in a terminal state, by feature and status."))
	x.Duration, _ = m.Float64Histogram("mediagen.generation.duration", metric.WithUnit("s"), metric.WithDescription("Time from submit to a terminal state, by kind."))
	x.Charged, _ = m.Float64Counter("mediagen.cost.charged", metric.WithUnit("USD"), metric.WithDescription("Balance charged by submitted generations."))
	x.Refunded, _ = m.Float64Counter("mediagen.cost.refunded", metric.WithUnit("USD"), metric.WithDescription("Balance refunded by generations ended in error or timeout."))
	x.Requests, _ = m.Int64Counter("mediagen.requests", metric.WithDescription("HTTP attempts, by method and outcome."))
	x.Retries, _ = m.Int64Counter("mediagen.retries", metric.WithDescription("Retries of HTTP requests, by reason."))
	x.Searches, _ = m.Int64Counter("mediagen.searches", metric.WithDescription("Searches after an ambiguous failure, by what they found."))
	x.Waits, _ = m.Int64Counter("mediagen.waits", metric.WithDescription("Waits ended, by what ended them: webhook or poll."))
	x.Deliveries, _ = m.Int64Counter("mediagen.webhook.deliveries", metric.WithDescription("Webhook deliveries, by result: verified, refused, duplicate."))
	return &x
}

// Global is the telemetry of code that has no client: the global providers.
var Global = &T{}

// Of returns a *client.Client's telemetry, for the packages given one
// (poll); package client, which this one cannot import, sets it.
var Of func(client any) *T

// opts are the measurement options of one attribute set, made once, so a
// measurement allocates nothing.
type opts struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

// maxSets bounds a cache against a surprise: its keys come from small
// vocabularies (methods, outcomes, features, statuses, hosts).
const maxSets = 4096

// cache is a map of at most maxSets values, each made once.
type cache[K comparable, V any] struct {
	sync.RWMutex
	m map[K]V
}

func (c *cache[K, V]) get(k K, newV func() V) V {
	c.RLock()
	v, ok := c.m[k]
	c.RUnlock()
	if ok {
		return v
	}
	v = newV()
	c.Lock()
	if len(c.m) < maxSets {
		c.m[k] = v
	}
	c.Unlock()
	return v
}

// sets caches opts by the values of up to two attribute keys.
var sets = cache[[4]string, opts]{m: map[[4]string]opts{}}

// set returns the options of the attribute set {k1: v1, k2: v2}; k2 ""
// leaves the second out.
func set(k1 attribute.Key, v1 string, k2 attribute.Key, v2 string) opts {
	return sets.get([4]string{string(k1), v1, string(k2), v2}, func() opts {
		kvs := []attribute.KeyValue{k1.String(v1)}
		if k2 != "" {
			kvs = append(kvs, k2.String(v2))
		}
		opt := metric.WithAttributeSet(attribute.NewSet(kvs...))
		return opts{add: []metric.AddOption{opt}, rec: []metric.RecordOption{opt}}
	})
}
