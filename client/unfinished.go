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

// Resumable is a generation the journal recorded that is not terminal, or whose outputs are not saved.
type Resumable struct {
	Key        string               // the idempotency key of the call that created it
	Generation *mediagen.Generation // as read from the service now
}

// Unfinished yields the keyed generations of the journal not finished or not saved, oldest first, read
// afresh, for a restarted program to wait on and save ([Client.SaveOutput] with [WithIdempotencyKey]).
// One found terminal is recorded as finished; one the service no longer has, as finished and saved, and
// is yielded as an error matching [ErrNotFound]. Voice clones are not listed.
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

// markSaved records in the journal that the outputs of the call's key's generation were saved.
func (c *Client) markSaved(ctx context.Context, cfg *config) error {
	if cfg.s.idemKey == "" {
		return nil
	}
	if err := cfg.s.journal.Mark(ctx, cfg.s.idemKey, true, true); err != nil && !errors.Is(err, journal.ErrNotFound) {
		return fmt.Errorf("mediagen: journal: recording the save: %w", err)
	}
	return nil
}

// priceCache holds the last price list [Client.Pricing] read, for the estimate a keyed call records;
// it reads none itself, so a charging call sends no other request.
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
