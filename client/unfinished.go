package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client/journal"
)

// Resumable is a generation the journal recorded that has not reached a
// terminal state, or whose outputs were not saved yet.
type Resumable struct {
	Key        string               // the idempotency key of the call that created it
	Generation *mediagen.Generation // as read from the service now
}

// Unfinished yields the generations of the journal ([WithJournal]) that
// were created with an idempotency key and are not finished or not saved,
// oldest first, each read fresh from the service, so that a restarted
// program can wait on them again (package poll) and save their outputs
// ([Client.SaveOutput] with [WithIdempotencyKey] records that). A
// generation found in a terminal state is recorded as finished; one the
// service no longer has (it expired) is recorded as finished and saved, and
// yielded as an error matching [ErrNotFound] with the key. Voice clones
// are not listed.
func (c *Client) Unfinished(ctx context.Context, opts ...Option) iter.Seq2[Resumable, error] {
	return func(yield func(Resumable, error) bool) {
		cfg, err := c.configure(opts)
		if err != nil {
			yield(Resumable{}, err)
			return
		}
		j := cfg.s.journal
		recs, err := j.Unfinished(ctx)
		if err != nil {
			yield(Resumable{}, fmt.Errorf("mediagen: journal: %w", err))
			return
		}
		for _, r := range recs {
			if r.Op != "generation" {
				continue
			}
			g, err := c.getGeneration(ctx, cfg, r.ID)
			switch {
			case errors.Is(err, ErrNotFound):
				_ = j.Mark(ctx, r.Key, true, true)
				err = fmt.Errorf("mediagen: generation %s of idempotency key %q is gone: %w", r.ID, r.Key, err)
				if !yield(Resumable{Key: r.Key}, err) {
					return
				}
				continue
			case err != nil:
				yield(Resumable{Key: r.Key}, err)
				return
			case g.Terminal() && !r.Finished:
				if err := j.Mark(ctx, r.Key, true, false); err != nil {
					yield(Resumable{Key: r.Key, Generation: g}, fmt.Errorf("mediagen: journal: %w", err))
					return
				}
			}
			if g.Terminal() && g.Status != mediagen.GenerationStatusDone {
				_ = j.Mark(ctx, r.Key, true, true) // nothing to save
			}
			if !yield(Resumable{Key: r.Key, Generation: g}, nil) {
				return
			}
		}
	}
}

// markSaved records in the journal that the outputs of key's generation
// were saved.
func (c *Client) markSaved(ctx context.Context, cfg *config) error {
	if cfg.s.idemKey == "" {
		return nil
	}
	if err := cfg.s.journal.Mark(ctx, cfg.s.idemKey, true, true); err != nil && !errors.Is(err, journal.ErrNotFound) {
		return fmt.Errorf("mediagen: journal: recording the save: %w", err)
	}
	return nil
}

// priceCache holds the last price list the client read ([Client.Pricing]),
// for the estimate a keyed call records. It never reads one itself: a
// charging call sends no request besides its own, and a record made before
// any price list was read carries no estimate.
type priceCache struct{ atomic.Pointer[Pricing] }

// estimate returns the most args may cost, or 0 when that is not known.
func (pc *priceCache) estimate(args Args) float64 {
	p := pc.Load()
	if p == nil {
		return 0
	}
	e, err := p.Estimate(args)
	if err != nil {
		return 0
	}
	return e.Max
}
