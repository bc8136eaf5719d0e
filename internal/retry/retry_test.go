package retry

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{" 3 ", 3 * time.Second, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"99999999999999999", time.Duration(math.MaxInt64/int64(time.Second)) * time.Second, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
	} {
		got, ok := ParseRetryAfter(tc.in, now)
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestBackoffGrowsAndStaysInBounds(t *testing.T) {
	lo, hi := 100*time.Millisecond, time.Second
	for attempt := range 10 {
		step := min(lo<<attempt, hi)
		for range 50 {
			d := Backoff(lo, hi, attempt)
			assert.GreaterOrEqual(t, d, step/2, "attempt %d", attempt)
			assert.LessOrEqual(t, d, step, "attempt %d", attempt)
		}
	}
	assert.Zero(t, Backoff(0, 0, 3))
	assert.Zero(t, Backoff(0, time.Second, 0), "a zero first step retries at once")
}

func TestTransientStatus(t *testing.T) {
	for _, code := range []int{429, 500, 502, 503, 504} {
		assert.True(t, TransientStatus(code), code)
	}
	for _, code := range []int{200, 400, 401, 403, 404, 501} {
		assert.False(t, TransientStatus(code), code)
	}
}
