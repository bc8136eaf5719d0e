package riverjob

import (
	"context"
	"time"
)

// Cleanup is the deletion of old rows a worker runs every hour, for the
// tests.
func (s *Store) Cleanup(ctx context.Context, before time.Time) error { return s.cleanup(ctx, before) }
