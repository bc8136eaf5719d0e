package main

import (
	"context"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/webhook"
)

const (
	// followBack is how far below the newest generation the first listing
	// looks for renders still running when listen starts: none runs longer.
	followBack = time.Hour
	// listSlack is how long below the newest request time listed the ids of
	// generations that ended are kept: rows older than that count as read
	// without them.
	listSlack = 30 * time.Second
	// pageSize is the rows of a listing page: the most the service gives.
	pageSize = 100
)

// follower is what listen knows of the project's generations and voice
// clones, so that each listing reads only what changed: the first page, as
// a rule, and further pages only for renders it follows that have slid
// down the list.
type follower struct {
	c       *client.Client
	started bool                 // the first listing, of what predates the start, is done
	newest  time.Time            // the newest request time listed so far
	running map[string]time.Time // generations pending or running, by id: their request time
	ended   map[string]time.Time // generations seen ended near the top of the list, not to forward again
	voices  map[string]bool      // the project's clones, by id: true once training ended
}

func newFollower(c *client.Client) *follower {
	return &follower{c: c, running: map[string]time.Time{}, ended: map[string]time.Time{}}
}

// generations lists the project's generations, newest first, and returns
// those that ended since the last listing. The first listing returns none:
// what ended before the start is not forwarded, and what was still running
// then is followed. A listing stops at the first row an earlier one read,
// unless a render it follows lies further down: then it reads on, page
// after page, to where that render's request time places it (not there: it
// was deleted or expired). On an error it returns what ended among the
// rows read.
func (f *follower) generations(ctx context.Context) ([]*mediagen.Generation, error) {
	first := !f.started
	boundary := f.newest.Add(-listSlack)
	newest := f.newest
	met := map[string]bool{}
	var out []*mediagen.Generation
	for g, err := range f.c.Generations(ctx, client.ListParams{Limit: pageSize}) {
		if err != nil {
			return out, err
		}
		if g.RequestDate.After(newest) {
			newest = g.RequestDate
		}
		if first && newest.Sub(g.RequestDate) > followBack {
			break
		}
		_, following := f.running[g.ID]
		_, ended := f.ended[g.ID]
		old := !first && g.RequestDate.Before(boundary) // read by an earlier listing
		switch {
		case following:
			met[g.ID] = true
			if generationEnded(g.Status) {
				delete(f.running, g.ID)
				f.ended[g.ID] = g.RequestDate
				out = append(out, g)
			}
		case old || ended:
		case generationEnded(g.Status):
			f.ended[g.ID] = g.RequestDate
			if !first {
				out = append(out, g)
			}
		default:
			f.running[g.ID] = g.RequestDate
			met[g.ID] = true
		}
		if !first && (following || old || ended) && !f.awaits(g.RequestDate, met) {
			break // read before, and no render followed lies further down
		}
	}
	for id := range f.running {
		if !met[id] {
			delete(f.running, id) // deleted or expired while running
		}
	}
	f.started, f.newest = true, newest
	for id, t := range f.ended {
		if t.Before(newest.Add(-listSlack)) {
			delete(f.ended, id) // below the next listing's boundary: never looked up again
		}
	}
	return out, nil
}

// awaits reports whether a render followed and not met yet in this listing
// lies further down the list than a row requested at t.
func (f *follower) awaits(t time.Time, met map[string]bool) bool {
	for id, at := range f.running {
		if !met[id] && !at.After(t) {
			return true
		}
	}
	return false
}

// clones lists the project's voice clones and returns those whose training
// ended since the last listing; the first listing returns none.
func (f *follower) clones(ctx context.Context) ([]*mediagen.Voice, error) {
	vs, err := f.c.Voices(ctx, client.VoiceFilter{Owner: mediagen.VoiceOwnerProject})
	if err != nil {
		return nil, err
	}
	first := f.voices == nil
	now := make(map[string]bool, len(vs)) // deleted clones drop out
	var out []*mediagen.Voice
	for _, v := range vs {
		ended := v.Status == mediagen.VoiceStatusDone || v.Status == mediagen.VoiceStatusError
		if ended && !first && !f.voices[v.ID] {
			out = append(out, v)
		}
		now[v.ID] = ended
	}
	f.voices = now
	return out, nil
}

// generationEnded reports whether s is a terminal status, one a webhook
// event is sent for.
func generationEnded(s mediagen.GenerationStatus) bool {
	return s == mediagen.GenerationStatusDone || s == mediagen.GenerationStatusError || s == mediagen.GenerationStatusTimeout
}

// generationEvent is the event the service sends when g ended.
func generationEvent(g *mediagen.Generation) webhook.EventName {
	return webhook.EventName("generation." + string(g.Status))
}

// voiceEvent is the event the service sends when v's training ended.
func voiceEvent(v *mediagen.Voice) webhook.EventName {
	if v.Status == mediagen.VoiceStatusDone {
		return webhook.EventVoiceDone
	}
	return webhook.EventVoiceError
}
