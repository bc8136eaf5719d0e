package clienttest

import (
	"errors"
	"fmt"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/refserver"
	"github.com/mediagen/mediagen-go/internal/refserver/fault"
)

// Option configures the server [Start] and [NewServer] start.
type Option func(*config) error

// Outcome is how a render or a clone's training ends.
type Outcome string

// The outcomes [WithOutcome] can choose.
const (
	OutcomeDone    Outcome = "done"
	OutcomeError   Outcome = "error"   // refunded
	OutcomeTimeout Outcome = "timeout" // refunded
)

// WithBalance sets the starting balance, in USD, of the default project.
func WithBalance(usd float64) Option {
	return func(c *config) error {
		if usd < 0 {
			return fmt.Errorf("clienttest: WithBalance(%g): negative", usd)
		}
		c.balance = usd
		return nil
	}
}

// WithProject adds another project, for tests of tenant isolation.
func WithProject(apiKey string, balance float64) Option {
	return func(c *config) error {
		if apiKey == "" || apiKey == APIKey {
			return fmt.Errorf("clienttest: WithProject(%q): want a key other than the default project's", apiKey)
		}
		c.more = append(c.more, refserver.WithProject(apiKey, balance))
		return nil
	}
}

// WithOutcome decides how each render or clone training ends, by canonical
// feature ("audio/voice-clone" for clones). By default all succeed. It takes
// the place of the render faults ([Faults] RenderError and RenderTimeout),
// which then end no render.
func WithOutcome(fn func(feature mediagen.Feature) Outcome) Option {
	return func(c *config) error {
		if fn == nil {
			return errors.New("clienttest: WithOutcome: nil function")
		}
		c.more = append(c.more, refserver.WithOutcome(func(feature string) refserver.Outcome {
			return refserver.Outcome(fn(mediagen.Feature(feature)))
		}))
		return nil
	}
}

// WithRenderScale multiplies render and training durations (default 0.01),
// which tests that watch renders mid-flight with Advance see.
func WithRenderScale(f float64) Option {
	return func(c *config) error {
		if f <= 0 {
			return fmt.Errorf("clienttest: WithRenderScale(%g): want a positive factor", f)
		}
		c.scale = f
		return nil
	}
}

// WithStartTime sets the time the fake clock starts at ([StartTime]).
func WithStartTime(t time.Time) Option {
	return func(c *config) error {
		c.start, c.startSet = t, true
		return nil
	}
}

// WithWallClock runs the server on the wall clock: renders (still scaled)
// and expiries happen in real time, [Server.Advance] and the clients' waits
// sleep. It is for code that waits on its own timers or another process.
// It cannot be combined with [WithStartTime].
func WithWallClock() Option {
	return func(c *config) error {
		c.wall = true
		return nil
	}
}

// WithFaults makes the server inject f from the start, deterministically for
// its Seed.
func WithFaults(f Faults) Option {
	return func(c *config) error {
		if err := f.config().Validate(); err != nil {
			return fmt.Errorf("clienttest: WithFaults: %w", err)
		}
		c.faults = f
		return nil
	}
}

// Faults says which faults the server injects; the zero value injects none.
// Rates are probabilities from 0 to 1, drawn per request or render from Seed.
type Faults struct {
	Seed int64
	// RenderError and RenderTimeout end renders and trainings in error or
	// timeout (refunded), of RenderFeatures only when it is set.
	RenderError, RenderTimeout float64
	RenderFeatures             []mediagen.Feature
	// HTTPStatus replaces answers with one of Statuses (default 500, 502
	// and 503); an injected 429 carries a Retry-After of RetryAfter, in
	// whole seconds and at least 1.
	HTTPStatus float64
	Statuses   []int
	RetryAfter time.Duration
	// DropBefore drops the connection before the server acts on the
	// request; DropAfter after (the case billing-safe retries exist for).
	DropBefore, DropAfter float64
	// Latency delays every request that Paths and Methods select by this
	// much of wall time.
	Latency time.Duration
	// Paths and Methods limit HTTP faults to these path prefixes and
	// methods; by default every method under /v3/, so uploads and
	// downloads (/storage/) are spared unless Paths names them.
	Paths, Methods []string
}

func (f Faults) config() fault.Config {
	var features []string
	for _, ft := range f.RenderFeatures {
		features = append(features, string(ft))
	}
	return fault.Config{
		Seed: f.Seed, RenderError: f.RenderError, RenderTimeout: f.RenderTimeout, RenderFeatures: features,
		HTTPStatus: f.HTTPStatus, Statuses: f.Statuses, RetryAfter: f.RetryAfter,
		DropBefore: f.DropBefore, DropAfter: f.DropAfter, Latency: f.Latency, Paths: f.Paths, Methods: f.Methods,
	}
}

// FaultCounts counts what the server injected (fields as fault.Stats).
type FaultCounts struct {
	Requests       int64 // every request seen, faulted or not
	Replaced       int64 // answers replaced by an injected status
	DroppedBefore  int64 // connections dropped before the server acted
	DroppedAfter   int64 // connections dropped after the server acted
	Delayed        int64 // requests held back by Latency
	RenderErrors   int64 // renders ended in error
	RenderTimeouts int64 // renders ended in timeout
}
