package clienttest

import (
	"github.com/mediagen/mediagen-go/internal/refserver"
	"github.com/mediagen/mediagen-go/internal/refserver/fault"
)

// The reference server lives in an internal package; these aliases and
// constructors give tests in other modules everything NewServer accepts.

// Option configures the reference server [NewServer] starts.
type Option = refserver.Option

// Outcome is how a render or a clone's training ends.
type Outcome = refserver.Outcome

// The outcomes [WithOutcome] can choose.
const (
	OutcomeDone    = refserver.OutcomeDone
	OutcomeError   = refserver.OutcomeError
	OutcomeTimeout = refserver.OutcomeTimeout
)

// FakeClock is the server's clock; [Server.Advance] moves it.
type FakeClock = refserver.FakeClock

// ReferenceServer is the in-process reference server: balances
// ([ReferenceServer.SetBalance]), webhook secret rotation
// ([ReferenceServer.RotateWebhookSecret]) and fault switches
// ([ReferenceServer.Faults]).
type ReferenceServer = refserver.Server

// FaultConfig says which faults the server injects: failed or timed-out
// renders, 5xx or 429 answers, connections dropped before or after a request
// is processed, added latency. The zero value injects nothing.
type FaultConfig = fault.Config

// FaultInjector switches faults at run time ([FaultInjector.SetConfig]) and
// counts them ([FaultInjector.Stats]).
type FaultInjector = fault.Injector

// WithBalance sets the starting balance, in USD, of the default project.
func WithBalance(usd float64) Option { return refserver.WithProject(APIKey, usd) }

// WithProject adds another project, for tests of tenant isolation.
func WithProject(apiKey string, balance float64) Option {
	return refserver.WithProject(apiKey, balance)
}

// WithOutcome decides how each render or clone training ends; fn receives
// the canonical feature ("audio/voice-clone" for clones). By default every
// render succeeds.
func WithOutcome(fn func(feature string) Outcome) Option { return refserver.WithOutcome(fn) }

// WithRenderScale multiplies render and training durations (default 0.01).
func WithRenderScale(f float64) Option { return refserver.WithRenderScale(f) }

// WithFaults makes the server inject the faults of cfg, deterministically for
// its seed. NewServer panics on an invalid cfg.
func WithFaults(cfg FaultConfig) Option { return refserver.WithFaults(cfg) }
