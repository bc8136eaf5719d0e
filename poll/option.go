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

// Option configures one wait: [Generation], [Generations] or [Voice]. A bad
// option, or one the kind of wait does not take, fails the wait before
// anything is sent; a nil Option is skipped.
type Option func(*settings) error

// option applies set when ok, and fails with problem otherwise.
func option(ok bool, problem string, set func(*settings)) Option {
	return func(s *settings) error {
		if !ok {
			return errors.New(problem)
		}
		set(s)
		return nil
	}
}

// positive is the option of a duration that must be positive.
func positive(name string, d time.Duration, set func(*settings)) Option {
	return option(d > 0, fmt.Sprintf("poll.%s(%s): needs a positive duration", name, d), set)
}

// WithInterval checks every d, without growth or jitter, instead of the
// schedule by kind; d must be positive.
func WithInterval(d time.Duration) Option {
	return positive("WithInterval", d, func(s *settings) { s.interval = d })
}

// WithMaxWait gives up after d from the start of the call, whatever the
// context allows: the last check is at d, and no check's retry ends past
// it, then a [*GaveUpError] matching [ErrMaxWait]. d must be positive.
func WithMaxWait(d time.Duration) Option {
	return positive("WithMaxWait", d, func(s *settings) { s.maxWait = d })
}

// OnUpdate calls fn, on the waiting goroutine, each time a generation's
// status is first seen or changes; fn must return quickly and not modify
// it. Each fn given is called, in order. [Voice] takes [OnVoiceUpdate].
func OnUpdate(fn func(*mediagen.Generation)) Option {
	return option(fn != nil, "poll.OnUpdate: needs a non-nil function", func(s *settings) {
		s.onUpdate = then(s.onUpdate, fn)
	})
}

// OnVoiceUpdate is [OnUpdate] for [Voice]; other waits refuse it.
func OnVoiceUpdate(fn func(*mediagen.Voice)) Option {
	return option(fn != nil, "poll.OnVoiceUpdate: needs a non-nil function", func(s *settings) {
		s.onVoiceUpdate = then(s.onVoiceUpdate, fn)
	})
}

// then returns a callback calling prev, if any, then fn.
func then[T any](prev, fn func(T)) func(T) {
	if prev == nil {
		return fn
	}
	return func(v T) { prev(v); fn(v) }
}

// WithClientOptions applies opts (a timeout, a header, a retry policy,
// middleware...) to the wait's requests, its saves included, on top of the
// client's; several add up. One that cannot apply to a call
// ([client.WithBaseURL]...) fails the wait before anything is sent.
func WithClientOptions(opts ...client.Option) Option {
	return option(true, "", func(s *settings) { s.clientOpts = append(slices.Clip(s.clientOpts), opts...) })
}

// settings is what one wait's options say.
type settings struct {
	interval      time.Duration // fixed; 0: the schedule by kind
	maxWait       time.Duration
	onUpdate      func(*mediagen.Generation)
	onVoiceUpdate func(*mediagen.Voice)
	clientOpts    []client.Option // shared, clipped on append
	clock         client.Clock
	jitter        func() float64 // uniform in [0, 1)
	hub           *hub.Hub
	kind          mediagen.Kind
	saveDir       string
	saveFunc      client.OpenFunc
}

// waitKind says what a wait waits on, for the options that belong to one.
type waitKind int

const (
	generationWait waitKind = iota
	voiceWait
)

// newSettings reads opts: a bad one fails the call before any request,
// rather than ending the wait as if it could resume.
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

// readOptions applies and checks opts for a wait of kind, joining every problem.
func readOptions(kind waitKind, opts []Option) (*settings, error) {
	s := &settings{jitter: rand.Float64}
	var errs []error
	for _, o := range opts {
		if o != nil {
			errs = append(errs, o(s))
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
	if kind == voiceWait && (s.saveDir != "" || s.saveFunc != nil) {
		errs = append(errs, errors.New("poll: WithSaveTo and WithSaveFunc save generations; a voice wait has nothing to save"))
	}
	return s, errors.Join(errs...)
}

// CheckOptions returns, joined, the errors opts would fail a wait on
// generations with, for packages that pass poll options on (batch).
func CheckOptions(opts ...Option) error {
	_, err := readOptions(generationWait, opts)
	return err
}
