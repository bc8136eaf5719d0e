package poll

import (
	"math"
	"time"

	"github.com/mediagen/mediagen-go"
)

// schedule is the interval between checks of one kind of work: first,
// growing by growth per check up to max, jittered by ±jitterFrac within.
type schedule struct {
	first, max time.Duration
}

const (
	growth     = 1.5
	jitterFrac = 0.1
)

var (
	fastSchedule   = schedule{first: 1 * time.Second, max: 3 * time.Second}  // image, text
	mediumSchedule = schedule{first: 2 * time.Second, max: 5 * time.Second}  // audio, and kinds this SDK does not know yet
	slowSchedule   = schedule{first: 5 * time.Second, max: 10 * time.Second} // video
	voiceSchedule  = slowSchedule
)

func scheduleFor(kind mediagen.Kind) schedule {
	switch kind {
	case mediagen.KindImage, mediagen.KindText:
		return fastSchedule
	case mediagen.KindVideo:
		return slowSchedule
	}
	return mediumSchedule
}

// Schedule returns the first and longest interval between checks of a
// generation of kind, for code that schedules its own checks.
func Schedule(kind mediagen.Kind) (first, longest time.Duration) {
	s := scheduleFor(kind)
	return s.first, s.max
}

// at returns the wait before check n (from 1), given r uniform in [0, 1).
func (s schedule) at(n int, r float64) time.Duration {
	base := float64(s.first) * math.Pow(growth, float64(max(n-1, 0)))
	base = math.Min(base, float64(s.max))
	d := base * (1 + jitterFrac*(2*r-1))
	// Reflect at the bounds so jitter spreads waiters at both ends.
	if d > float64(s.max) {
		d = 2*float64(s.max) - d
	}
	if d < float64(s.first) {
		d = 2*float64(s.first) - d
	}
	return time.Duration(d)
}

// intervalFor returns the wait before check n on sc, or the fixed interval.
func (st *settings) intervalFor(sc schedule, n int) time.Duration {
	if st.interval > 0 {
		return st.interval
	}
	return sc.at(n, st.jitter())
}
