package charge

import (
	"sync"
	"time"
)

// lagSamples is how many created rows a client sees before it trusts what
// they say of the service's clocks enough to search less far back than
// clockSkew: a service of many replicas shows each one's clocks only now
// and then.
const lagSamples = 16

// lag learns how far the clock that stamps rows' request dates runs behind
// the service's Date header, the clock a search's window is converted to.
// Each row a create hands back bounds it: the answer's Date is stamped
// after the row and rounded down to the second, so Date - requested + 1 s
// is at least the lag of the replica that answered. The margin is the
// largest bound seen: on a service whose clocks agree it is about a second,
// so a search after an ambiguous failure reads fewer rows and is less
// likely to take a twin requested just before (by another caller) for its
// own; on one whose clocks disagree by more than clockSkew it grows with
// them, where a fixed margin would miss the row and charge twice. The zero
// value is ready; it is safe for concurrent use.
type lag struct {
	mu      sync.Mutex
	n       int
	worst   time.Duration
	precise bool // a row's date had a fraction of a second
}

// observe records a created row's request date and its answer's Date; a
// zero time (an answer without Date, a row without date) says nothing.
func (l *lag) observe(date, requested time.Time) {
	if date.IsZero() || requested.IsZero() {
		return
	}
	b := date.Sub(requested) + time.Second
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 || b > l.worst {
		l.worst = b
	}
	if l.n < lagSamples {
		l.n++
	}
	l.precise = l.precise || requested.Nanosecond() != 0
}

// margin is how far back of the attempt's start, on the Date clock, a
// search looks: the largest bound seen, a second more while every row's
// date was in whole seconds (a row's own rounding down, which the bound of
// another row may not show), never less than a millisecond (a zero
// Window.Margin means clockSkew); and never less than clockSkew until
// lagSamples rows were seen.
func (l *lag) margin() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.worst
	if !l.precise {
		m += time.Second
	}
	switch {
	case l.n == 0:
		return clockSkew
	case l.n < lagSamples:
		return max(clockSkew, m)
	default:
		return max(time.Millisecond, m)
	}
}
