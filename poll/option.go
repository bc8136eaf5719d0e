package poll

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

// A wait takes [client.Option] values: the options of this package, and any
// of package client (a timeout, a header, a retry policy, a logger), which
// apply to every request of the wait on top of the client's. Every option
// applies to every wait, except the two update callbacks: [OnUpdate]
// belongs to waits on generations and [OnVoiceUpdate] to [Voice]; given to
// the other kind of wait, they make it fail at once rather than be ignored.

var (
	intervalKey      = client.NewKey("poll.WithInterval", positive)
	maxWaitKey       = client.NewKey("poll.WithMaxWait", positive)
	onUpdateKey      = client.NewKey("poll.OnUpdate", notNil[*mediagen.Generation])
	onVoiceUpdateKey = client.NewKey("poll.OnVoiceUpdate", notNil[*mediagen.Voice])
	jitterKey        = client.NewKey[func() float64]("poll jitter", nil) // for tests
)

func positive(d time.Duration) error {
	if d <= 0 {
		return errors.New("needs a positive duration")
	}
	return nil
}

func notNil[T any](fn func(T)) error {
	if fn == nil {
		return errors.New("needs a non-nil function")
	}
	return nil
}

// WithInterval checks every d, without growth or jitter, instead of the
// schedule by kind. d must be positive; intervals below a second cost
// requests without making renders faster.
func WithInterval(d time.Duration) client.Option { return intervalKey.Option(d) }

// WithMaxWait gives up after d, measured from the start of the call,
// whatever the context allows. The last check happens at d; the wait then
// ends with a [*GaveUpError] matching [ErrMaxWait]. d must be positive.
func WithMaxWait(d time.Duration) client.Option { return maxWaitKey.Option(d) }

// OnUpdate calls fn with the generation each time its status is first seen
// or changes, terminal status included. fn runs on the waiting goroutine,
// one call at a time, so it must return quickly; it must not modify the
// generation. [Voice] refuses it; see [OnVoiceUpdate].
func OnUpdate(fn func(*mediagen.Generation)) client.Option { return onUpdateKey.Option(fn) }

// OnVoiceUpdate is [OnUpdate] for [Voice]: fn gets the voice each time its
// status is first seen or changes. [Generation] and [Generations] refuse it.
func OnVoiceUpdate(fn func(*mediagen.Voice)) client.Option { return onVoiceUpdateKey.Option(fn) }

// settings is what one wait's options say.
type settings struct {
	interval      time.Duration // fixed interval; 0 means the schedule by kind
	maxWait       time.Duration // 0 means only the context bounds the wait
	onUpdate      func(*mediagen.Generation)
	onVoiceUpdate func(*mediagen.Voice)
	opts          []client.Option // every option, for the client calls
	clock         client.Clock
	jitter        func() float64 // uniform in [0, 1)
	hub           *Hub           // events end the wait; polling is the backstop
	kind          mediagen.Kind  // of the generation, when told
	saveDir       string         // where done outputs are saved
	saveFunc      OpenFunc       // or where they are written
}

// waitKind says what a wait waits on, for the options that belong to one.
type waitKind int

const (
	generationWait waitKind = iota
	voiceWait
)

// newSettings reads opts. A bad option fails the call here, before any
// request, rather than ending the wait as if it could resume.
func newSettings(c *client.Client, kind waitKind, opts []client.Option) (*settings, error) {
	if c == nil {
		return nil, errors.New("poll: nil client")
	}
	s := &settings{opts: opts, clock: c.Clock(opts...), jitter: rand.Float64}
	// Get checks every option; the first call reports them all.
	var err error
	s.interval, _, err = intervalKey.Get(opts)
	s.maxWait, _, _ = maxWaitKey.Get(opts)
	s.onUpdate, _, _ = onUpdateKey.Get(opts)
	s.onVoiceUpdate, _, _ = onVoiceUpdateKey.Get(opts)
	s.hub, _, _ = hubOption.Get(opts)
	s.kind, _, _ = kindOption.Get(opts)
	s.saveDir, _, _ = saveDirKey.Get(opts)
	s.saveFunc, _, _ = saveFuncKey.Get(opts)
	if s.saveDir != "" && s.saveFunc != nil {
		err = errors.Join(err, errors.New("poll: WithSaveTo and WithSaveFunc: give one"))
	}
	if j, ok, _ := jitterKey.Get(opts); ok {
		s.jitter = j
	}
	switch {
	case kind == voiceWait && s.onUpdate != nil:
		err = errors.Join(err, errors.New("poll: OnUpdate reports generations; a voice wait takes OnVoiceUpdate"))
	case kind == generationWait && s.onVoiceUpdate != nil:
		err = errors.Join(err, errors.New("poll: OnVoiceUpdate reports voices; a generation wait takes OnUpdate"))
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}
