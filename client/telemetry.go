package client

import (
	"context"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/telemetry"
)

func init() { telemetry.Of = func(c any) *telemetry.T { return c.(*Client).tel } }

// startJob starts the job span of a generation, continuing the trace of a keyed call's journal record.
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

// Observed records that the caller found generation g terminal by its own means (its own GetGeneration
// loop, a stored webhook event), as package poll and SaveOutput do: with tracing or metrics on, g's job
// ends with its status, cost and refund. The job is the one this process opened at submit, or else a
// mediagen.generation.resume span continuing the trace in ctx. Call it once per generation; a g not terminal changes nothing.
func (c *Client) Observed(ctx context.Context, g *mediagen.Generation) {
	if g == nil || !g.Terminal() {
		return
	}
	c.tel.Observe(ctx, g.ID, string(g.Feature), string(g.Kind), string(g.Status), g.BalanceUsed, g.RequestDate)
}

// Release records that this process hands generation id, not terminal, to another (a queue snoozing a job):
// its job span ends "released", not finished, and the next follower continues the trace.
func (c *Client) Release(id string) {
	telemetry.Release(id)
}
