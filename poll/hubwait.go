package poll

import (
	"context"
	"errors"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

// BackstopInterval is how often a wait with a hub checks after its first
// backstop check, in case the events were lost.
const BackstopInterval = 15 * time.Second

// WithKind tells a wait the kind of the generation (g.Kind from
// CreateGeneration): with a hub ([WithHub]) its first backstop check then
// comes when a render of that kind is normally over, not when the slowest
// kind's is.
func WithKind(k mediagen.Kind) Option {
	return func(s *settings) error {
		s.kind = k
		return nil
	}
}

// firstBackstop is when a render of kind is normally over: the first check
// of a wait fed by a hub. Unknown kinds wait as long as video.
func firstBackstop(kind mediagen.Kind) time.Duration {
	switch kind {
	case mediagen.KindImage, mediagen.KindText:
		return 10 * time.Second
	case mediagen.KindAudio:
		return 20 * time.Second
	}
	return time.Minute
}

// voiceBackstop is when a clone's training is normally over.
const voiceBackstop = 35 * time.Second

// sleepOrEvent waits d on the deadline's clock, or until an event wakes
// it. It reports whether an event came.
func sleepOrEvent(ctx context.Context, dl deadline, d time.Duration, events <-chan struct{}) (bool, error) {
	select {
	case <-events:
		return true, nil
	default:
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	woke := make(chan bool, 1)
	go func() {
		select {
		case <-events:
			woke <- true
			cancel()
		case <-sctx.Done():
			woke <- false
		}
	}()
	err := dl.sleep(sctx, d)
	cancel()
	if <-woke && ctx.Err() == nil {
		return true, nil
	}
	return false, err
}

// generationWithHub is [Generation] fed by a hub: the event ends the wait;
// a GET happens only when a backstop check is due.
func generationWithHub(ctx context.Context, c *client.Client, s *settings, id string) (*mediagen.Generation, error) {
	events, stop := s.hub.watch(hubKey{id: id})
	defer stop()
	dl := newDeadline(s)
	var last *mediagen.Generation
	next := firstBackstop(s.kind)
	for {
		if e, ok := s.hub.lookup(hubKey{id: id}); ok {
			s.observe(last, e.gen)
			return e.gen, s.finish(ctx, c, e.gen)
		}
		woke, err := sleepOrEvent(ctx, dl, next, events)
		if woke {
			continue
		}
		if err != nil {
			return last, giveUp(ctx, id, last, err)
		}
		g, err := c.GetGeneration(ctx, id, s.clientOpts...)
		if err != nil {
			if errors.Is(err, client.ErrNotFound) && ctx.Err() == nil {
				return last, &GoneError{ID: id, Seen: last != nil, Err: err}
			}
			return last, giveUp(ctx, id, last, err)
		}
		s.observe(last, g)
		last = g
		if g.Terminal() {
			return g, s.finish(ctx, c, g)
		}
		next = BackstopInterval
	}
}

// voiceWithHub is [Voice] fed by a hub.
func voiceWithHub(ctx context.Context, c *client.Client, s *settings, id string) (*mediagen.Voice, error) {
	events, stop := s.hub.watch(hubKey{voice: true, id: id})
	defer stop()
	dl := newDeadline(s)
	var last *mediagen.Voice
	next := voiceBackstop
	for {
		if e, ok := s.hub.lookup(hubKey{voice: true, id: id}); ok {
			return voiceResult(s, last, e.voice)
		}
		woke, err := sleepOrEvent(ctx, dl, next, events)
		if woke {
			continue
		}
		if err != nil {
			return last, voiceGaveUp(ctx, id, last, err)
		}
		v, err := c.GetVoice(ctx, id, s.clientOpts...)
		if err != nil {
			if errors.Is(err, client.ErrNotFound) && ctx.Err() == nil {
				return last, &GoneError{ID: id, Voice: true, Seen: last != nil, Err: err}
			}
			return last, voiceGaveUp(ctx, id, last, err)
		}
		if v.Terminal() {
			return voiceResult(s, last, v)
		}
		if s.onVoiceUpdate != nil && (last == nil || last.Status != v.Status) {
			s.onVoiceUpdate(v)
		}
		last = v
		next = BackstopInterval
	}
}

// voiceResult ends a voice wait on v, terminal.
func voiceResult(s *settings, last, v *mediagen.Voice) (*mediagen.Voice, error) {
	if s.onVoiceUpdate != nil && (last == nil || last.Status != v.Status) {
		s.onVoiceUpdate(v)
	}
	if v.Status == mediagen.VoiceStatusError {
		return v, &VoiceFailedError{Voice: v}
	}
	return v, nil
}
