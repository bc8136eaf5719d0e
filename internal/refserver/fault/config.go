package fault

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DefaultStatuses are the answers injected when Config.Statuses is empty:
// the server errors a client meets in practice and should survive.
var DefaultStatuses = []int{500, 502, 503}

// DefaultPathPrefix limits HTTP faults when Config.Paths is empty. Storage
// URLs are left alone by default because uploads and downloads have their own
// retry rules; list "/storage/" in Paths to break them too.
const DefaultPathPrefix = "/v3/"

// Config says which faults to inject and how often. The zero value injects
// nothing.
//
// HTTPStatus, DropBefore and DropAfter are exclusive: one draw per request
// picks at most one of them, so each happens with exactly its probability and
// their sum must not exceed 1. Likewise RenderError plus RenderTimeout.
type Config struct {
	// Seed makes the faults reproducible: same seed, same requests, same faults.
	Seed int64

	// RenderError is the probability a render or clone training ends in error.
	RenderError float64
	// RenderTimeout is the probability a render or clone training times out.
	RenderTimeout float64
	// RenderFeatures limits render faults to these features, matched exactly
	// as given; empty means every feature.
	RenderFeatures []string

	// HTTPStatus is the probability an answer is replaced by one of Statuses.
	// A replaced request is not processed: the handler never runs.
	HTTPStatus float64
	// Statuses are the replacement answers, 4xx or 5xx; empty means
	// DefaultStatuses.
	Statuses []int
	// RetryAfter is sent as Retry-After with an injected 429, in whole
	// seconds rounded up and at least 1.
	RetryAfter time.Duration

	// DropBefore is the probability the connection is dropped before the
	// request is processed: the handler never runs.
	DropBefore float64
	// DropAfter is the probability the connection is dropped after the request
	// was processed and before any byte of the answer is written. The handler's
	// effects stand, which is what tempts a client to charge twice.
	DropAfter float64

	// Latency is added before answering a request that matches Paths and
	// Methods; it ends early, without processing, if the client goes away.
	// Bodies up to 1 MiB are read ahead so a departure is noticed during it.
	Latency time.Duration

	// Paths limits HTTP faults to paths with these prefixes; empty means
	// DefaultPathPrefix.
	Paths []string
	// Methods limits HTTP faults to these methods (any case); empty means all.
	Methods []string
}

// Validate reports every problem of c at once, so a command-line user fixes
// a bad flag set in one go.
func (c Config) Validate() error {
	var errs []error
	prob := func(name string, p float64) {
		if !(p >= 0 && p <= 1) { // also rejects NaN
			errs = append(errs, fmt.Errorf("fault: %s %v is not a probability in [0, 1]", name, p))
		}
	}
	prob("RenderError", c.RenderError)
	prob("RenderTimeout", c.RenderTimeout)
	prob("HTTPStatus", c.HTTPStatus)
	prob("DropBefore", c.DropBefore)
	prob("DropAfter", c.DropAfter)
	// Slack for sums such as 0.7+0.2+0.1 that float arithmetic puts a hair over 1.
	const slack = 1e-9
	if s := c.RenderError + c.RenderTimeout; s > 1+slack {
		errs = append(errs, fmt.Errorf("fault: RenderError + RenderTimeout = %v exceeds 1", s))
	}
	if s := c.HTTPStatus + c.DropBefore + c.DropAfter; s > 1+slack {
		errs = append(errs, fmt.Errorf("fault: HTTPStatus + DropBefore + DropAfter = %v exceeds 1", s))
	}
	for _, s := range c.Statuses {
		if s < 400 || s > 599 {
			errs = append(errs, fmt.Errorf("fault: status %d is not a 4xx or 5xx error", s))
		}
	}
	if c.RetryAfter < 0 {
		errs = append(errs, fmt.Errorf("fault: negative RetryAfter %v", c.RetryAfter))
	}
	if c.Latency < 0 {
		errs = append(errs, fmt.Errorf("fault: negative Latency %v", c.Latency))
	}
	for _, p := range c.Paths {
		if !strings.HasPrefix(p, "/") {
			errs = append(errs, fmt.Errorf("fault: path prefix %q does not start with /", p))
		}
	}
	for _, m := range c.Methods {
		if m == "" || strings.ContainsAny(m, " \t\r\n") {
			errs = append(errs, fmt.Errorf("fault: bad method %q", m))
		}
	}
	for _, f := range c.RenderFeatures {
		if f == "" {
			errs = append(errs, errors.New("fault: empty render feature"))
		}
	}
	return errors.Join(errs...)
}

// clone copies the slices so a caller changing its Config afterwards cannot
// race with requests in flight.
func (c Config) clone() Config {
	c.RenderFeatures = append([]string(nil), c.RenderFeatures...)
	c.Statuses = append([]int(nil), c.Statuses...)
	c.Paths = append([]string(nil), c.Paths...)
	c.Methods = append([]string(nil), c.Methods...)
	return c
}

// statuses returns the replacement answers in effect.
func (c Config) statuses() []int {
	if len(c.Statuses) == 0 {
		return DefaultStatuses
	}
	return c.Statuses
}

// retryAfterSeconds is the Retry-After value of an injected 429.
func (c Config) retryAfterSeconds() int64 {
	return max(1, int64(math.Ceil(c.RetryAfter.Seconds())))
}

// ParseStatuses reads a comma-separated list such as "500,502,429" from a
// command-line flag. An empty string gives nil, which means DefaultStatuses.
func ParseStatuses(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("fault: status %q is not a number", f)
		}
		if n < 400 || n > 599 {
			return nil, fmt.Errorf("fault: status %d is not a 4xx or 5xx error", n)
		}
		out = append(out, n)
	}
	return out, nil
}
