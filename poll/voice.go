package poll

import (
	"context"
	"errors"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
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
	if s.hub != nil {
		return voiceWithHub(ctx, c, s, id)
	}
	dl := newDeadline(s)
	var last *mediagen.Voice
	for n := 1; ; n++ {
		v, err := c.GetVoice(ctx, id, s.clientOpts...)
		if err != nil {
			if errors.Is(err, client.ErrNotFound) && ctx.Err() == nil {
				return last, &GoneError{ID: id, Voice: true, Seen: last != nil, Err: err}
			}
			return last, voiceGaveUp(ctx, id, last, err)
		}
		if s.onVoiceUpdate != nil && (last == nil || last.Status != v.Status) {
			s.onVoiceUpdate(v)
		}
		last = v
		switch v.Status {
		case "", mediagen.VoiceStatusDone: // a catalog voice has no status
			return v, nil
		case mediagen.VoiceStatusError:
			return v, &VoiceFailedError{Voice: v}
		}
		if err := dl.sleep(ctx, s.intervalFor(voiceSchedule, n)); err != nil {
			return last, voiceGaveUp(ctx, id, last, err)
		}
	}
}

func voiceGaveUp(ctx context.Context, id string, last *mediagen.Voice, err error) *GaveUpError {
	e := giveUp(ctx, id, nil, err)
	if last != nil {
		e.Status = string(last.Status)
	}
	return e
}
