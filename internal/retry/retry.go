// Package retry is the one backoff, Retry-After reading, sleep and retry
// loop of the SDK: API requests, storage PUTs, downloads and the search
// after an ambiguous failure all wait through it.
package retry

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backoff returns the wait before retry attempt (0 for the first): a step
// from lo doubling per attempt up to hi, its upper half jittered so that
// clients failing together do not retry together. A step <= 0 is no wait.
func Backoff(lo, hi time.Duration, attempt int) time.Duration {
	step := lo
	for i := 0; i < attempt && step < hi; i++ {
		step *= 2
	}
	step = min(step, hi)
	if step <= 0 {
		return 0
	}
	half := step / 2
	return half + rand.N(step-half+1)
}

// ParseRetryAfter reads a Retry-After value (seconds or an HTTP date)
// relative to now; false when unparsable or negative. A delay past what a
// Duration holds is clamped: it means "very long".
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, math.MaxInt64/int64(time.Second))) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}

// After returns the Retry-After of resp, if it has one.
func After(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp == nil {
		return 0, false
	}
	return ParseRetryAfter(resp.Header.Get("Retry-After"), now)
}

// TransientStatus reports whether an answer with code may succeed when sent
// again: 429, 500, 502, 503, 504. Only a request that charges nothing may be
// resent on 500.
func TransientStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}
