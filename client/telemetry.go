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
// means, such as its own GetGeneration loop or a webhook event it stored:
// with tracing or metrics on, g's job in this process ends with its
// status, cost and refund, as the waits of package poll and SaveOutput end
// it themselves. A g that is not terminal, or whose job is not open in this
// process, changes nothing.
func (c *Client) Observed(g *mediagen.Generation) {
	if g == nil || !g.Terminal() {
		return
	}
	telemetry.Lookup(g.ID).Finish(string(g.Status), g.Status != mediagen.GenerationStatusDone, "")
}
