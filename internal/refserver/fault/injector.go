package fault

import (
	"math/rand/v2"
	"slices"
	"sync"
)

// Render outcomes returned by Injector.Outcome; they match the terminal
// statuses of a generation.
const (
	OutcomeDone    = "done"
	OutcomeError   = "error"
	OutcomeTimeout = "timeout"
)

// renderStream keeps render draws apart from HTTP draws for the same seed.
const renderStream = 0x9e3779b97f4a7c15

// Stats counts what an Injector did, so tests can tell a fault happened
// rather than guess from timing.
type Stats struct {
	Requests       int64 // every request through Wrap, matching the filters or not
	Replaced       int64 // answers replaced by an injected error status
	DroppedBefore  int64 // connections dropped before the handler ran
	DroppedAfter   int64 // connections dropped after the handler ran
	Delayed        int64 // requests held back by Latency
	RenderErrors   int64 // Outcome calls that returned OutcomeError
	RenderTimeouts int64 // Outcome calls that returned OutcomeTimeout
}

// Injector injects the faults of its Config. Create it with New.
type Injector struct {
	mu     sync.Mutex
	cfg    Config
	httpR  *rand.Rand
	render *rand.Rand
	stats  Stats
}

// New returns an Injector for cfg, or the error of cfg.Validate.
func New(cfg Config) (*Injector, error) {
	in := &Injector{}
	if err := in.SetConfig(cfg); err != nil {
		return nil, err
	}
	return in, nil
}

// SetConfig switches faults at run time, for tests that break the service,
// heal it and then check consistency. The random streams carry on unless the
// seed changes, so turning faults off and on again does not replay the same
// faults; a new seed starts new streams.
func (in *Injector) SetConfig(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg = cfg.clone()
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.httpR == nil || cfg.Seed != in.cfg.Seed {
		s := uint64(cfg.Seed)
		in.httpR = rand.New(rand.NewPCG(s, s))
		in.render = rand.New(rand.NewPCG(s, s^renderStream))
	}
	in.cfg = cfg
	return nil
}

// Config returns a copy of the configuration in effect.
func (in *Injector) Config() Config {
	if in == nil {
		return Config{}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.cfg.clone()
}

// Stats returns the counts so far.
func (in *Injector) Stats() Stats {
	if in == nil {
		return Stats{}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.stats
}

// Outcome decides how a render or clone training of feature ends: OutcomeDone,
// OutcomeError or OutcomeTimeout. It draws only when feature is subject to
// render faults, so unrelated renders do not shift the sequence.
func (in *Injector) Outcome(feature string) string {
	if in == nil {
		return OutcomeDone
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	c := &in.cfg
	if c.RenderError+c.RenderTimeout == 0 {
		return OutcomeDone
	}
	if len(c.RenderFeatures) > 0 && !slices.Contains(c.RenderFeatures, feature) {
		return OutcomeDone
	}
	u := in.render.Float64()
	switch {
	case u < c.RenderError:
		in.stats.RenderErrors++
		return OutcomeError
	case u < c.RenderError+c.RenderTimeout:
		in.stats.RenderTimeouts++
		return OutcomeTimeout
	default:
		return OutcomeDone
	}
}
