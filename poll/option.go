package poll

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/hub"
)

// Option configures one wait: [Generation], [Generations] or [Voice]. An
// option given a bad value, or to a kind of wait it does not apply to,
// makes the wait fail before anything is sent, with an error naming it; a
// nil Option is skipped.
type Option func(*settings) error

// WithInterval checks every d, without growth or jitter, instead of the
// schedule by kind. d must be positive; intervals below a second cost
// requests without making renders faster.
func WithInterval(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return fmt.Errorf("poll.WithInterval(%s): needs a positive duration", d)
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
			return fmt.Errorf("poll.WithMaxWait(%s): needs a positive duration", d)
		}
		s.maxWait = d
		return nil
	}
}

// OnUpdate calls fn with the generation each time its status is first seen
// or changes, terminal status included. fn runs on the waiting goroutine,
// one call at a time, so it must return quickly; it must not modify the
// generation. Given more than once, each fn is called, in order. [Voice]
// refuses it; see [OnVoiceUpdate].
func OnUpdate(fn func(*mediagen.Generation)) Option {
	return func(s *settings) error {
		if fn == nil {
			return errors.New("poll.OnUpdate: needs a non-nil function")
		}
		if prev := s.onUpdate; prev != nil {
			s.onUpdate = func(g *mediagen.Generation) { prev(g); fn(g) }
		} else {
			s.onUpdate = fn
		}
		return nil
	}
}

// OnVoiceUpdate is [OnUpdate] for [Voice]: fn gets the voice each time its
// status is first seen or changes. [Generation] and [Generations] refuse it.
func OnVoiceUpdate(fn func(*mediagen.Voice)) Option {
	return func(s *settings) error {
		if fn == nil {
			return errors.New("poll.OnVoiceUpdate: needs a non-nil function")
		}
		s.onVoiceUpdate = fn
		return nil
	}
}

// WithClientOptions applies opts (a timeout, a header, a retry policy, a
// logger, middleware...) to every request of the wait, on top of the
// client's: its checks, and the downloads of [WithSaveTo] and
// [WithSaveFunc]. Several add up, in order. A client option that cannot
// apply to a call ([client.WithBaseURL], a negative timeout...) makes the
// wait fail before anything is sent, as a bad poll option does.
func WithClientOptions(opts ...client.Option) Option {
	return func(s *settings) error {
		s.clientOpts = append(slices.Clip(s.clientOpts), opts...)
		return nil
	}
}

// settings is what one wait's options say.
type settings struct {
	interval      time.Duration // fixed interval; 0 means the schedule by kind
	maxWait       time.Duration // 0 means only the context bounds the wait
	onUpdate      func(*mediagen.Generation)
	onVoiceUpdate func(*mediagen.Voice)
	clientOpts    []client.Option // for the wait's requests; shared, clipped on append
	clock         client.Clock
	jitter        func() float64  // uniform in [0, 1)
	hub           *hub.Hub        // events end the wait; polling is the backstop
	kind          mediagen.Kind   // of the generation, when told
	saveDir       string          // where done outputs are saved
	saveFunc      client.OpenFunc // or where they are written
}

// waitKind says what a wait waits on, for the options that belong to one.
type waitKind int

const (
	generationWait waitKind = iota
	voiceWait
)

// newSettings reads opts. A bad option fails the call here, before any
// request, rather than ending the wait as if it could resume.
func newSettings(c *client.Client, kind waitKind, opts []Option) (*settings, error) {
	if c == nil {
		return nil, errors.New("poll: nil client")
	}
	s, err := readOptions(kind, opts)
	if err != nil {
		return nil, err
	}
	s.clock = c.Clock(s.clientOpts...)
	return s, nil
}

// readOptions applies opts over the defaults and checks them, the client
// options they carry included, for a wait of kind; the error joins every
// problem.
func readOptions(kind waitKind, opts []Option) (*settings, error) {
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
	if err := client.CheckOptions(s.clientOpts...); err != nil {
		errs = append(errs, fmt.Errorf("poll.WithClientOptions: %w", err))
	}
	if s.saveDir != "" && s.saveFunc != nil {
		errs = append(errs, errors.New("poll: WithSaveTo and WithSaveFunc: give one"))
	}
	switch {
	case kind == voiceWait && s.onUpdate != nil:
		errs = append(errs, errors.New("poll: OnUpdate reports generations; a voice wait takes OnVoiceUpdate"))
	case kind == generationWait && s.onVoiceUpdate != nil:
		errs = append(errs, errors.New("poll: OnVoiceUpdate reports voices; a generation wait takes OnUpdate"))
	}
	return s, errors.Join(errs...)
}

// CheckOptions reports the errors opts would make a wait on generations
// ([Generation], [Generations]) fail with, joined, without waiting: for
// packages that carry poll options to the waits they make (batch), so a
// bad one fails before anything is sent.
func CheckOptions(opts ...Option) error {
	_, err := readOptions(generationWait, opts)
	return err
}
