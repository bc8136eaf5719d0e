package poll

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

func TestFailedErrorSaysRefunded(t *testing.T) {
	msg := "render failed: the logo could not be read"
	for _, status := range []mediagen.GenerationStatus{mediagen.GenerationStatusError, mediagen.GenerationStatusTimeout} {
		g := generation("gen_1", status)
		g.Error = msg
		err := failure(g)
		var fe *FailedError
		if assert.ErrorAs(t, err, &fe) {
			assert.Same(t, g, fe.Generation)
		}
		assert.ErrorContains(t, err, "gen_1")
		assert.ErrorContains(t, err, string(status))
		assert.ErrorContains(t, err, msg)
		assert.ErrorContains(t, err, "refunded")
	}
	assert.NoError(t, failure(generation("gen_2", mediagen.GenerationStatusDone)))

	// A reason that says the refund already is not told it twice.
	g := generation("gen_3", mediagen.GenerationStatusError)
	g.Error = "render failed; the charge was refunded, so retrying is safe"
	assert.Equal(t, 1, strings.Count(failure(g).Error(), "refund"), failure(g).Error())
	v := &VoiceFailedError{Voice: &mediagen.Voice{ID: "voice_1", Error: "training failed; the charge was refunded"}}
	assert.Equal(t, 1, strings.Count(v.Error(), "refund"), v.Error())
}

func TestGaveUpErrorUnwrapsTheCause(t *testing.T) {
	last := generation("gen_1", mediagen.GenerationStatusRunning)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := giveUp(ctx, "gen_1", last, fmt.Errorf("transport: %w", context.Canceled))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "running", err.Status)
	assert.Same(t, last, err.Last)
	assert.ErrorContains(t, err, "gen_1")
	assert.ErrorContains(t, err, "resume")

	err = giveUp(context.Background(), "gen_1", nil, ErrMaxWait)
	assert.ErrorIs(t, err, ErrMaxWait)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "a max wait is a deadline")
	assert.Empty(t, err.Status)

	boom := errors.New("service unavailable")
	assert.ErrorIs(t, giveUp(context.Background(), "gen_1", last, boom), boom)
}

func TestGoneError(t *testing.T) {
	notFound := fmt.Errorf("get: %w", client.ErrNotFound)
	err := &GoneError{ID: "gen_1", Seen: true, Err: notFound}
	assert.ErrorIs(t, err, ErrGone)
	assert.ErrorIs(t, err, client.ErrNotFound)
	assert.EqualError(t, err, "poll: generation gen_1 expired or was deleted while waiting")
	assert.ErrorContains(t, &GoneError{ID: "gen_2", Err: notFound}, "unknown id, expired or deleted")
	assert.EqualError(t, &GoneError{ID: "v_1", Voice: true, Seen: true, Err: notFound}, "poll: voice v_1 was deleted while waiting")
}

// generation returns a generation with id and status.
func generation(id string, status mediagen.GenerationStatus) *mediagen.Generation {
	return &mediagen.Generation{ID: id, Status: status}
}
