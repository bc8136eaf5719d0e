package poll

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mediagen/mediagen-go"
)

// ErrGone matches a [*GoneError]: the generation or voice answered 404.
var ErrGone = errors.New("poll: expired or deleted")

// ErrMaxWait matches a [*GaveUpError] caused by [WithMaxWait], and
// context.DeadlineExceeded.
var ErrMaxWait = fmt.Errorf("poll: maximum wait reached: %w", context.DeadlineExceeded)

// FailedError is returned, with the generation, when it ends in status
// error or timeout; its charge was refunded.
type FailedError struct {
	Generation *mediagen.Generation
}

// Error names the generation, its status and the service's reason.
func (e *FailedError) Error() string {
	g := e.Generation
	return failedMessage(fmt.Sprintf("generation %s ended with status %s", g.ID, g.Status), g.Error)
}

// VoiceFailedError is returned, with the voice, when a voice clone ends in
// status error; its charge was refunded.
type VoiceFailedError struct {
	Voice *mediagen.Voice
}

// Error names the voice clone and the service's reason.
func (e *VoiceFailedError) Error() string {
	return failedMessage(fmt.Sprintf("voice clone %s failed", e.Voice.ID), e.Voice.Error)
}

// failedMessage adds the service's reason and, unless it says so, the refund.
func failedMessage(what, reason string) string {
	msg := "poll: " + what
	if reason != "" {
		msg += ": " + reason
	}
	if strings.Contains(reason, "refund") {
		return msg
	}
	return msg + " (its charge was refunded)"
}

// GoneError reports a generation or voice that answered 404: expired,
// deleted, or, unless the wait had Seen it, never existed. It unwraps to
// the client's error.
type GoneError struct {
	ID    string
	Voice bool // a voice, not a generation
	Seen  bool
	Err   error
}

// Error says the id is gone and whether the wait had seen it.
func (e *GoneError) Error() string {
	what := "generation"
	if e.Voice {
		what = "voice"
	}
	switch {
	case !e.Seen:
		return fmt.Sprintf("poll: %s %s not found: unknown id, expired or deleted", what, e.ID)
	case e.Voice:
		return fmt.Sprintf("poll: voice %s was deleted while waiting", e.ID)
	}
	return fmt.Sprintf("poll: generation %s expired or was deleted while waiting", e.ID)
}

// Is makes errors.Is(err, ErrGone) true.
func (e *GoneError) Is(target error) bool { return target == ErrGone }

// Unwrap returns the client's error for the 404.
func (e *GoneError) Unwrap() error { return e.Err }

// GaveUpError is returned when a wait stops before a terminal state; the
// work goes on, so wait again with ID to resume. Err is ctx.Err(),
// [ErrMaxWait] or the client's error.
type GaveUpError struct {
	ID string
	// Status is the last status seen, "" when none was.
	Status string
	// Last is the last generation seen; nil for voices or when none was.
	Last *mediagen.Generation
	Err  error
}

// Error names the id, the last status seen and why the wait stopped.
func (e *GaveUpError) Error() string {
	return fmt.Sprintf("poll: stopped waiting for %s (last status %s; wait again with its id to resume): %v", e.ID, cmp.Or(e.Status, "unknown"), e.Err)
}

// Unwrap returns Err.
func (e *GaveUpError) Unwrap() error { return e.Err }

// giveUp builds a GaveUpError; the context's error wins over the one it caused.
func giveUp(ctx context.Context, id string, last *mediagen.Generation, err error) *GaveUpError {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ErrMaxWait) {
		err = ctxErr
	}
	e := &GaveUpError{ID: id, Last: last, Err: err}
	if last != nil {
		e.Status = string(last.Status)
	}
	return e
}
