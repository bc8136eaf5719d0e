package poll

import (
	"context"
	"errors"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/webhook"
)

// voiceSchedule is the interval of voice clone training checks: the
// interface document advises 5 to 10 s.
var voiceSchedule = slowSchedule

// Voice waits until the voice clone id has finished training and returns
// it. A catalog voice, which has no status, is returned at once. Status error
// returns the voice with a [*VoiceFailedError]; a 404 (the clone was deleted)
// returns a [*GoneError]; a wait that stops early returns the last voice
// seen (or nil) with a [*GaveUpError]. [OnVoiceUpdate] reports status
// changes.
func Voice(ctx context.Context, c *client.Client, id string, opts ...Option) (*mediagen.Voice, error) {
	s, err := newSettings(c, voiceWait, opts)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, errors.New("poll: empty voice id")
	}
	return wait(ctx, s, hub.Key{ID: id, Voice: true}, voiceSubject{c: c, s: s, id: id})
}

// voiceSubject is the [subject] of a wait on a voice clone.
type voiceSubject struct {
	c  *client.Client
	s  *settings
	id string
}

func (w voiceSubject) get(ctx context.Context) (*mediagen.Voice, error) {
	return w.c.GetVoice(ctx, w.id, w.s.clientOpts...)
}

func (w voiceSubject) fromEvent(ev *webhook.Event) *mediagen.Voice { return ev.Voice }

func (w voiceSubject) observe(last, v *mediagen.Voice) {
	if w.s.onVoiceUpdate != nil && (last == nil || last.Status != v.Status) {
		w.s.onVoiceUpdate(v)
	}
}

func (w voiceSubject) end(_ context.Context, v *mediagen.Voice) error {
	if v.Status == mediagen.VoiceStatusError {
		return &VoiceFailedError{Voice: v}
	}
	return nil
}

func (w voiceSubject) gone(seen bool, err error) error {
	return &GoneError{ID: w.id, Voice: true, Seen: seen, Err: err}
}

func (w voiceSubject) gaveUp(ctx context.Context, last *mediagen.Voice, err error) error {
	e := giveUp(ctx, w.id, nil, err)
	if last != nil {
		e.Status = string(last.Status)
	}
	return e
}

func (w voiceSubject) interval(_ *mediagen.Voice, n int) time.Duration {
	return w.s.intervalFor(voiceSchedule, n)
}

func (w voiceSubject) backstop() time.Duration { return voiceBackstop }
