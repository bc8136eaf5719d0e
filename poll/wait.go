package poll

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/internal/telemetry"
	"github.com/mediagen/mediagen-go/webhook"
)

// BackstopInterval is how often a wait with a hub checks after its first
// check, in case events were lost.
const BackstopInterval = 15 * time.Second

// voiceBackstop is when a clone's training is normally over.
const voiceBackstop = 35 * time.Second

// WithHub ends a wait as soon as h receives a terminal event for its id,
// and polls only as a backstop: first at [FirstBackstop] of the kind
// ([WithKind]), then every [BackstopInterval]. A render already over when
// the wait begins is seen only at that first check: read it first, or wait
// without a hub.
func WithHub(h *hub.Hub) Option {
	return option(h != nil, "poll.WithHub: needs a hub", func(s *settings) { s.hub = h })
}

// WithKind tells a wait with a hub the generation's kind, so its first
// check comes when that kind's render is normally over.
func WithKind(k mediagen.Kind) Option {
	return option(true, "", func(s *settings) { s.kind = k })
}

// FirstBackstop returns when a render of kind is normally over: the first
// check of a wait with a hub. Unknown kinds wait as long as video.
func FirstBackstop(kind mediagen.Kind) time.Duration {
	switch kind {
	case mediagen.KindImage, mediagen.KindText:
		return 10 * time.Second
	case mediagen.KindAudio:
		return 20 * time.Second
	}
	return time.Minute
}

// Generation waits until the generation id is terminal and returns it; the
// first check is immediate. See the package documentation for how it ends.
func Generation(ctx context.Context, c *client.Client, id string, opts ...Option) (*mediagen.Generation, error) {
	s, err := newSettings(c, generationWait, opts)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, errors.New("poll: empty generation id")
	}
	ctx, tw := telemetry.Of(c).StartWait(ctx, id)
	err = telemetry.ErrPanicked // until wait returns: OnUpdate or a save's OpenFunc may panic
	defer func() { tw.Close(err) }()
	g, err := wait(ctx, s, subject[*mediagen.Generation]{
		key: hub.Key{ID: id},
		tel: tw,
		get: func(ctx context.Context, opts []client.Option) (*mediagen.Generation, error) {
			return c.GetGeneration(ctx, id, opts...)
		},
		fromEvent: func(ev *webhook.Event) *mediagen.Generation { return ev.Generation },
		observe:   s.observe,
		end:       func(ctx context.Context, g *mediagen.Generation) error { return s.finish(ctx, c, g) },
		gaveUp: func(ctx context.Context, last *mediagen.Generation, err error) error {
			return giveUp(ctx, id, last, err)
		},
		interval: func(last *mediagen.Generation, n int) time.Duration {
			return s.intervalFor(scheduleFor(last.Kind), n)
		},
		backstop: FirstBackstop(s.kind),
	})
	return g, err
}

func (s *settings) observe(prev, g *mediagen.Generation) {
	if s.onUpdate != nil && (prev == nil || prev.Status != g.Status) {
		s.onUpdate(g)
	}
}

// Voice waits until the voice clone id has finished training and returns
// it; a catalog voice is returned at once. Status error returns a
// [*VoiceFailedError]; otherwise it ends as [Generation] does.
func Voice(ctx context.Context, c *client.Client, id string, opts ...Option) (*mediagen.Voice, error) {
	s, err := newSettings(c, voiceWait, opts)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, errors.New("poll: empty voice id")
	}
	return wait(ctx, s, subject[*mediagen.Voice]{
		key: hub.Key{ID: id, Voice: true},
		get: func(ctx context.Context, opts []client.Option) (*mediagen.Voice, error) {
			return c.GetVoice(ctx, id, opts...)
		},
		fromEvent: func(ev *webhook.Event) *mediagen.Voice { return ev.Voice },
		observe: func(last, v *mediagen.Voice) {
			if s.onVoiceUpdate != nil && (last == nil || last.Status != v.Status) {
				s.onVoiceUpdate(v)
			}
		},
		end: func(_ context.Context, v *mediagen.Voice) error {
			if v.Status == mediagen.VoiceStatusError {
				return &VoiceFailedError{Voice: v}
			}
			return nil
		},
		gaveUp: func(ctx context.Context, last *mediagen.Voice, err error) error {
			e := giveUp(ctx, id, nil, err)
			if last != nil {
				e.Status = string(last.Status)
			}
			return e
		},
		interval: func(_ *mediagen.Voice, n int) time.Duration { return s.intervalFor(voiceSchedule, n) },
		backstop: voiceBackstop,
	})
}

// subject is what one wait waits for, a generation or a voice clone.
type subject[T interface{ Terminal() bool }] struct {
	key       hub.Key
	get       func(context.Context, []client.Option) (T, error)
	fromEvent func(*webhook.Event) T
	observe   func(last, v T) // reports v when its status is new
	end       func(context.Context, T) error
	gaveUp    func(ctx context.Context, last T, err error) error
	interval  func(last T, n int) time.Duration // before check n, polling alone
	backstop  time.Duration                     // before the first check, with a hub
	tel       *telemetry.Wait                   // nil for none
}

// wait is the one wait loop: check, report, sleep, until the subject is
// terminal or the wait gives up.
func wait[T interface{ Terminal() bool }](ctx context.Context, s *settings, w subject[T]) (T, error) {
	p := newPacer(ctx, s, w.key)
	defer func() { p.stop() }() // the last watch
	var last T
	seen := false
	for n := 0; ; n++ {
		if ev, ok := p.event(w.key); ok {
			v := w.fromEvent(ev)
			w.observe(last, v)
			w.tel.End(true)
			return v, w.end(ctx, v)
		}
		woke, err := p.pause(ctx, n, w.backstop, func() time.Duration { return w.interval(last, n) })
		switch {
		case woke:
			n--
			continue
		case err != nil:
			return last, w.gaveUp(ctx, last, err)
		}
		v, err := w.get(ctx, p.opts)
		if err != nil {
			if errors.Is(err, client.ErrNotFound) && ctx.Err() == nil {
				if !w.key.Voice {
					telemetry.Gone(w.key.ID)
				}
				return last, &GoneError{ID: w.key.ID, Voice: w.key.Voice, Seen: seen, Err: err}
			}
			return last, w.gaveUp(ctx, last, err)
		}
		w.observe(last, v)
		last, seen = v, true
		w.tel.Check(v.Terminal())
		if v.Terminal() {
			w.tel.End(false)
			return v, w.end(ctx, v)
		}
	}
}

// pacer times a wait's checks, on the schedule or, with a hub, at the
// backstop times, a watch ending a sleep early; it enforces [WithMaxWait].
type pacer struct {
	s     *settings
	until time.Time       // zero: no WithMaxWait
	opts  []client.Option // of the checks: their retries end at until too
	keys  []hub.Key
	watch context.Context // ends when an event for keys arrives
	stop  context.CancelFunc
}

func newPacer(ctx context.Context, s *settings, keys ...hub.Key) *pacer {
	p := &pacer{s: s, keys: keys, opts: s.clientOpts, watch: ctx, stop: func() {}}
	if s.maxWait > 0 {
		p.until = s.clock.Now().Add(s.maxWait)
		p.opts = append(slices.Clip(s.clientOpts), client.WithClock(untilClock{s.clock, p.until}))
	}
	if s.hub != nil {
		p.watch, p.stop = s.hub.Watch(ctx, keys...)
	}
	return p
}

func (p *pacer) event(k hub.Key) (*webhook.Event, bool) {
	if p.s.hub == nil {
		return nil, false
	}
	return p.s.hub.Lookup(k)
}

// pause waits before check n: without a hub interval(), none before the
// first; with one, backstop then [BackstopInterval]. It reports whether a
// hub event ended the sleep, and then watches again.
func (p *pacer) pause(ctx context.Context, n int, backstop time.Duration, interval func() time.Duration) (bool, error) {
	if p.s.hub == nil {
		if n == 0 {
			return false, nil
		}
		return false, p.sleep(ctx, interval())
	}
	d := BackstopInterval
	if n == 0 {
		d = backstop
	}
	err := p.sleep(p.watch, d)
	if err != nil && ctx.Err() == nil && p.watch.Err() != nil {
		p.stop()
		p.watch, p.stop = p.s.hub.Watch(ctx, p.keys...)
		return true, nil
	}
	return false, err
}

// sleep waits d, up to the maximum wait, after which it fails with ErrMaxWait.
func (p *pacer) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !p.until.IsZero() {
		rem := p.until.Sub(p.s.clock.Now())
		if rem <= 0 {
			return ErrMaxWait
		}
		d = min(d, rem)
	}
	return p.s.clock.Sleep(ctx, d)
}

// untilClock is the clock of a wait's checks under [WithMaxWait]: a retry's
// sleep that would end past until fails at once, so a long Retry-After or
// backoff does not outlast the wait.
type untilClock struct {
	client.Clock
	until time.Time
}

func (c untilClock) Sleep(ctx context.Context, d time.Duration) error {
	if c.Now().Add(d).After(c.until) {
		return ErrMaxWait
	}
	return c.Clock.Sleep(ctx, d)
}
