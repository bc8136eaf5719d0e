package riverjob

import (
	"context"
	"time"
)

// Cleanup is the deletion of old rows a worker runs every hour, for the
// tests.
func (s *Store) Cleanup(ctx context.Context, before time.Time) error { return s.cleanup(ctx, before) }

// SetPricesFresh sets how long a worker keeps a price list, for the tests,
// and returns the old value.
func SetPricesFresh(d time.Duration) time.Duration {
	old := pricesFresh
	pricesFresh = d
	return old
}

// SetBeforeEnd sets a function Reconcile runs once it has decided how the
// reservation of key ends, before it ends it, for the tests.
func (s *Store) SetBeforeEnd(f func(key string)) { s.beforeEnd = f }
