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
	return wait(ctx, s, subject[*mediagen.Voice]{
		key:       hub.Key{ID: id, Voice: true},
		get:       func(ctx context.Context) (*mediagen.Voice, error) { return c.GetVoice(ctx, id, s.clientOpts...) },
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
