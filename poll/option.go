package poll

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/mediagen/mediagen-go"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/link"
)

// Option configures a wait. Every option applies to every wait, except the
// two update callbacks: [OnUpdate] belongs to waits on generations and
// [OnVoiceUpdate] to [Voice]; given to the other kind of wait, they make it
// fail at once rather than be ignored.
type Option func(*settings) error

// settings is what the options configure.
type settings struct {
	interval      time.Duration // fixed interval; 0 means the schedule by kind
	maxWait       time.Duration // 0 means only the context bounds the wait
	onUpdate      func(*mediagen.Generation)
	onVoiceUpdate func(*mediagen.Voice)
	clientOpts    []client.Option
	clock         link.Clock     // the client's, unless a test sets one
	jitter        func() float64 // uniform in [0, 1)
}

// WithClientOptions applies client options (a timeout, a header, a retry
// policy, a logger) to every request of the wait, on top of the client's.
func WithClientOptions(opts ...client.Option) Option {
	return func(s *settings) error {
		s.clientOpts = append(s.clientOpts, opts...)
		return nil
	}
}

// WithInterval checks every d, without growth or jitter, instead of the
// schedule by kind. d must be positive; intervals below a second cost
// requests without making renders faster.
func WithInterval(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return errors.New("poll: WithInterval needs a positive duration")
		}
		s.interval = d
		return nil
	}
}

// WithMaxWait gives up after d, measured from the start of the call,
// whatever the context allows. The last check happens at d; the wait then
// ends with a [*GaveUpError] matching [ErrMaxWait]. d must be positive.
func WithMaxWait(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return errors.New("poll: WithMaxWait needs a positive duration")
		}
		s.maxWait = d
		return nil
	}
}

// OnUpdate calls fn with the generation each time its status is first seen
// or changes, terminal status included. fn runs on the waiting goroutine,
// one call at a time, so it must return quickly; it must not modify the
// generation. [Voice] refuses it; see [OnVoiceUpdate].
func OnUpdate(fn func(*mediagen.Generation)) Option {
	return func(s *settings) error {
		if fn == nil {
			return errors.New("poll: OnUpdate needs a non-nil function")
		}
		s.onUpdate = fn
		return nil
	}
}

// OnVoiceUpdate is [OnUpdate] for [Voice]: fn gets the voice each time its
// status is first seen or changes. [Generation] and [Generations] refuse it.
func OnVoiceUpdate(fn func(*mediagen.Voice)) Option {
	return func(s *settings) error {
		if fn == nil {
			return errors.New("poll: OnVoiceUpdate needs a non-nil function")
		}
		s.onVoiceUpdate = fn
		return nil
	}
}

// waitKind says what a wait waits on, for the options that belong to one.
type waitKind int

const (
	generationWait waitKind = iota
	voiceWait
)

func newSettings(c *client.Client, kind waitKind, opts []Option) (*settings, error) {
	if c == nil {
		return nil, errors.New("poll: nil client")
	}
	s := &settings{jitter: rand.Float64}
	var errs []error
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(s); err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case kind == voiceWait && s.onUpdate != nil:
		errs = append(errs, errors.New("poll: OnUpdate reports generations; a voice wait takes OnVoiceUpdate"))
	case kind == generationWait && s.onVoiceUpdate != nil:
		errs = append(errs, errors.New("poll: OnVoiceUpdate reports voices; a generation wait takes OnUpdate"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// Resolving the wait's client options checks them now, so that a bad
	// one fails the call instead of ending the wait as if it could resume.
	clientOpts := make([]any, len(s.clientOpts))
	for i, o := range s.clientOpts {
		clientOpts[i] = o
	}
	in, err := link.Of(c, clientOpts...)
	if err != nil {
		return nil, err
	}
	if s.clock == nil {
		s.clock = in.Clock
	}
	return s, nil
}
