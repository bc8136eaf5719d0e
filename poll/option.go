package poll

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/mediagen/mediagen-go/client"
)

// Option configures a wait.
type Option func(*settings) error

// settings is what the options configure.
type settings struct {
	interval      time.Duration // fixed interval; 0 means the schedule by kind
	maxWait       time.Duration // 0 means only the context bounds the wait
	onUpdate      func(*client.Generation)
	onVoiceUpdate func(*client.Voice)
	clock         clock
	jitter        func() float64 // uniform in [0, 1)
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
// generation. [Voice] ignores it; see [OnVoiceUpdate].
func OnUpdate(fn func(*client.Generation)) Option {
	return func(s *settings) error {
		if fn == nil {
			return errors.New("poll: OnUpdate needs a non-nil function")
		}
		s.onUpdate = fn
		return nil
	}
}

// OnVoiceUpdate is [OnUpdate] for [Voice]: fn gets the voice each time its
// status is first seen or changes.
func OnVoiceUpdate(fn func(*client.Voice)) Option {
	return func(s *settings) error {
		if fn == nil {
			return errors.New("poll: OnVoiceUpdate needs a non-nil function")
		}
		s.onVoiceUpdate = fn
		return nil
	}
}

func newSettings(c *client.Client, opts []Option) (*settings, error) {
	if c == nil {
		return nil, errors.New("poll: nil client")
	}
	s := &settings{clock: realClock{}, jitter: rand.Float64}
	var errs []error
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(s); err != nil {
			errs = append(errs, err)
		}
	}
	return s, errors.Join(errs...)
}
