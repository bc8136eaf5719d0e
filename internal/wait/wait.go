// Package wait holds the one sleep the SDK's packages share: a pause that
// ends early, with the context's error, when the context ends.
package wait

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends, in which case it returns ctx.Err().
// A d of zero or less returns at once, with ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
