package poll

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
)

func TestScheduleByKind(t *testing.T) {
	tests := []struct {
		kind       mediagen.Kind
		first, max time.Duration
	}{
		{mediagen.KindImage, time.Second, 3 * time.Second},
		{mediagen.KindText, time.Second, 3 * time.Second},
		{mediagen.KindAudio, 2 * time.Second, 5 * time.Second},
		{mediagen.KindVideo, 5 * time.Second, 10 * time.Second},
		{"hologram", 2 * time.Second, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			sc := scheduleFor(tt.kind)
			assert.Equal(t, tt.first, sc.first)
			assert.Equal(t, tt.max, sc.max)

			// Without jitter (r = 0.5) the schedule starts at first and
			// grows to max, never shrinking.
			assert.Equal(t, tt.first, sc.at(1, 0.5))
			prev := time.Duration(0)
			for n := 1; n <= 12; n++ {
				d := sc.at(n, 0.5)
				assert.GreaterOrEqual(t, d, prev, "check %d", n)
				prev = d
			}
			assert.Equal(t, tt.max, sc.at(12, 0.5))
		})
	}
	assert.Equal(t, slowSchedule, voiceSchedule, "voice clones: 5 to 10 s")
}

func TestScheduleJitterBounds(t *testing.T) {
	for _, sc := range []schedule{fastSchedule, mediumSchedule, slowSchedule} {
		for n := 1; n <= 10; n++ {
			lo, hi := sc.at(n, 0), sc.at(n, 0.999999)
			for _, r := range []float64{0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999999} {
				d := sc.at(n, r)
				assert.GreaterOrEqual(t, d, sc.first, "never before the first interval")
				assert.LessOrEqual(t, d, sc.max, "never beyond the longest interval")
			}
			assert.NotEqual(t, lo, hi, "jitter spreads check %d of %v", n, sc)
		}
		// The first check lands within 10% after first; steady checks
		// within 10% before max.
		assert.LessOrEqual(t, sc.at(1, 0), sc.first+sc.first/10+time.Millisecond)
		assert.GreaterOrEqual(t, sc.at(20, 0.5), sc.max-sc.max/10)
		assert.GreaterOrEqual(t, sc.at(20, 0), sc.max-sc.max/10-time.Millisecond)
	}
}

func TestIntervalOverride(t *testing.T) {
	s := &settings{jitter: func() float64 { return 0.9 }}
	assert.NotEqual(t, 3*time.Second, s.intervalFor(fastSchedule, 10))
	require.NoError(t, WithInterval(250*time.Millisecond)(s))
	for n := 1; n <= 5; n++ {
		assert.Equal(t, 250*time.Millisecond, s.intervalFor(slowSchedule, n), "fixed, no growth, no jitter")
	}
}
