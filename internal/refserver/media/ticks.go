package media

import (
	"errors"
	"math"
	"time"
)

// errDurationRange reports a length field that no real file would hold.
var errDurationRange = errors.New("media: duration out of range")

// ticksToDuration converts n ticks of a 1/rate-second clock to a Duration,
// exactly when possible, without overflowing on hostile counts.
func ticksToDuration(n, rate uint64) (time.Duration, error) {
	if rate == 0 {
		return 0, errors.New("media: zero time scale")
	}
	secs, rem := n/rate, n%rate
	if secs > uint64(math.MaxInt64/int64(time.Second))-1 {
		return 0, errDurationRange
	}
	// rem < rate, so rem*1e9 overflows only for rates above ~1.8e10,
	// which no container field can hold (they are 32-bit at most).
	frac := rem * uint64(time.Second) / rate
	return time.Duration(secs)*time.Second + time.Duration(frac), nil
}
