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
// is at least the lag of the replica that answered. Each answer also
// bounds the Date clock against the client's: d - received <= offset <
// d + 1 s - sent. One clock's bounds all overlap; when the largest lower
// bound passes the smallest upper one, the Date clocks of the service's
// replicas (or the client's own clock, stepped) disagree by at least that
// much, and a search listed by a replica ahead of the one that dated the
// row would miss it. The margin is the largest lag bound plus that
// disagreement: on a service whose clocks agree it is about a second, so a
// search after an ambiguous failure reads fewer rows and is less likely to
// take a twin requested just before (by another caller) for its own; on
// one whose clocks disagree by more than clockSkew it grows with them,
// where a fixed margin would miss the row and charge twice. It also keeps
// the last created rows, which bound a lost row more closely in a burst
// ([lag.earliest]). The zero value is ready; it is safe for concurrent use.
type lag struct {
	mu      sync.Mutex
	n       int
	worst   time.Duration // the largest Date - requested + 1 s
	lo, hi  time.Duration // the tightest bounds of Date - the client's clock
	precise bool          // a row's date had a fraction of a second

	rows  [rowSamples]rowSample // the latest created rows, a ring
	next  int                   // where the next one goes
	apart bool                  // rows of one kind were seen dated by clocks apart
}

// What [lag.earliest] reads: the last rowSamples created rows, those
// within rowFresh of the attempt (its bound trusts that the service's
// clocks did not step back since). rowApart is how far apart two clocks
// that date rows may be without the rows showing it; rows within rowFresh
// of each other are said to come from clocks apart only past it, which
// leaves room for NTP's largest slew over rowFresh.
const (
	rowSamples = 64
	rowFresh   = 30 * time.Second
	rowApart   = 25 * time.Millisecond
)

// rowSample is a created row of a kind (Op.What), its request date and
// when its request was sent and its answer arrived on the client's clock,
// and when on the real one.
type rowSample struct {
	kind                            string
	sent, received, real, requested time.Time
}

// bounds returns the bounds one row gives of the offset of the clock that
// dated it from the client's: requested - received <= offset <=
// requested - sent, a second more for a date in whole seconds.
func (r rowSample) bounds() (lo, hi time.Duration) {
	hi = r.requested.Sub(r.sent)
	if r.requested.Nanosecond() == 0 {
		hi += time.Second
	}
	return r.requested.Sub(r.received), hi
}

// since is how long before start (on the client's clock), began (on the
// real one) r's answer arrived: the lesser of the two, since the service's
// clock follows the real one or, a test server's, the client's, and a
// client's test clock may move alone; false when longer ago than rowFresh.
func (r rowSample) since(start, began time.Time) (time.Duration, bool) {
	d, real := start.Sub(r.received), began.Sub(r.real)
	return min(d, real), d.Abs() <= rowFresh && real.Abs() <= rowFresh
}

// observe records a created row of kind, its request date and its
// answer's Date, sent and received at local times sent and received; a
// zero time (an answer without Date, a row without date) says nothing.
func (l *lag) observe(kind string, sent, received, date, requested time.Time) {
	if requested.IsZero() {
		return
	}
	row := rowSample{kind, sent, received, time.Now(), requested}
	l.mu.Lock()
	defer l.mu.Unlock()
	// A row whose bounds miss those of a recent row of its kind was dated
	// by another clock (a replica apart), which the last rows may not show
	// the next time: earliest says nothing from then on.
	olo, ohi := row.bounds()
	for _, r := range l.rows {
		if _, fresh := r.since(received, row.real); r.kind != kind || !fresh {
			continue
		}
		rlo, rhi := r.bounds()
		l.apart = l.apart || olo > rhi+rowApart || rlo > ohi+rowApart
	}
	l.rows[l.next] = row
	l.next = (l.next + 1) % rowSamples
	l.precise = l.precise || requested.Nanosecond() != 0
	if date.IsZero() {
		return
	}
	b := date.Sub(requested) + time.Second
	lo, hi := date.Sub(received), date.Add(time.Second).Sub(sent)
	if l.n == 0 {
		l.worst, l.lo, l.hi = b, lo, hi
	} else {
		l.worst, l.lo, l.hi = max(l.worst, b), max(l.lo, lo), min(l.hi, hi)
	}
	if l.n < lagSamples {
		l.n++
	}
}

// margin is how far back of the attempt's start, on the Date clock, a
// search looks: the largest lag bound seen, a second more while every
// row's date was in whole seconds (a row's own rounding down, which the
// bound of another row may not show), plus how far the Date clocks were
// seen to disagree; never less than a millisecond (a zero Window.Margin
// means clockSkew), and never less than clockSkew until lagSamples rows
// were seen.
func (l *lag) margin() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.worst + max(0, l.lo-l.hi)
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

// earliest bounds, on the service's clock, the request date of a row of
// kind an attempt that began at start on the client's clock, began on the
// real one, may have created; zero when fewer than lagSamples rows of kind
// were created within rowFresh of start. A row is dated after its request
// was sent and before its answer came back, so each recent row's
// requested - received is at most the offset of the clock that dated it
// from the client's; the smallest of them holds for every clock they came
// from. Unlike the Date header this bound is not rounded to the second, so
// in a burst of creates a search reads a fraction of the rows the Date's
// margin leaves in its window.
//
// What it takes for granted is kept narrow. Another kind's rows may be
// dated by another clock, or to the second. The time since a row is read
// on both the client's clock and the real one ([rowSample.since]). And the
// recent rows show every clock that dates rows: not so once rows were seen
// dated by clocks more than rowApart apart (replicas), as the replica
// behind may be missing from the last rows, so then it is zero; clocks
// closer than that are allowed for.
func (l *lag) earliest(kind string, start, began time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.apart {
		return time.Time{}
	}
	var floor time.Time
	n, precise := 0, false
	for _, r := range l.rows {
		d, fresh := r.since(start, began)
		if r.requested.IsZero() || r.kind != kind || !fresh {
			continue
		}
		// Less what the clocks may drift apart meanwhile (NTP slews at
		// most 500 ppm).
		if f := r.requested.Add(d - d.Abs()/2000); n == 0 || f.Before(floor) {
			floor = f
		}
		n++
		precise = precise || r.requested.Nanosecond() != 0
	}
	if n < lagSamples {
		return time.Time{}
	}
	if !precise {
		floor = floor.Add(-time.Second) // the lost row's date may be rounded down
	}
	return floor.Add(-rowApart)
}
