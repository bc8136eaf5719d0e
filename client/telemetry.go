package client

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/telemetry"
)

// WithTracerProvider makes the client trace with tp instead of the global
// provider (otel.GetTracerProvider, read at each call): a span per
// generation from submit to its terminal state and save, with a child per
// HTTP attempt, search, wait and save; see the README. New only.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(s *settings) error {
		if err := s.newOnly("WithTracerProvider"); err != nil {
			return err
		}
		if tp == nil {
			return errors.New("mediagen: WithTracerProvider: nil provider")
		}
		s.tracerProvider = tp
		return nil
	}
}

// WithMeterProvider makes the client record its metrics with mp instead
// of the global provider (otel.GetMeterProvider, read at each call); see
// the README for the instruments. New only.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(s *settings) error {
		if err := s.newOnly("WithMeterProvider"); err != nil {
			return err
		}
		if mp == nil {
			return errors.New("mediagen: WithMeterProvider: nil provider")
		}
		s.meterProvider = mp
		return nil
	}
}

// startJob starts the job span of a generation of feature. With a key and
// a journal record that carries a trace, the job continues that trace.
func (c *Client) startJob(ctx context.Context, cfg *config, feature string) (context.Context, *telemetry.Job) {
	if c.tel.Get() == nil {
		return ctx, nil
	}
	remote := ""
	if key := cfg.charge.Key; key != "" {
		if r, err := cfg.charge.Journal.Get(ctx, key); err == nil {
			remote = r.Trace
		}
	}
	return c.tel.StartJob(ctx, feature, remote, cfg.charge.Key)
}

// Observed records that the caller found generation g terminal by its own
// means, such as its own GetGeneration loop or a webhook event it stored,
// as the waits of package poll and SaveOutput do themselves: with tracing
// or metrics on, g's job ends with its status, cost and refund, and g
// counts as finished. The job is the one this process opened when it
// submitted g or, when it did not (a queue's later attempt, another
// machine), one that continues the trace in ctx, such as the job span the
// journal recorded with the key. Call it once per generation; a g that is
// not terminal changes nothing.
func (c *Client) Observed(ctx context.Context, g *mediagen.Generation) {
	if g == nil || !g.Terminal() {
		return
	}
	c.tel.Observe(ctx, g.ID, string(g.Feature), string(g.Kind), string(g.Status), g.BalanceUsed, g.RequestDate)
}

// Release records that this process stops following generation id before
// its terminal state and hands it to another, as a job queue does when it
// snoozes a job: with tracing on, its job span ends here with a "released"
// event (and does not count as finished). Whoever follows it next
// continues the trace: a keyed create takes it from the journal, and
// [Client.Observed] and SaveOutput continue the span in their context.
func (c *Client) Release(id string) {
	telemetry.Release(id)
}
