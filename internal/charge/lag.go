package charge

import (
	"sync"
	"time"
)

// lag learns how far the clock that dates rows runs behind the service's
// Date header, which a search's window is converted to, so a search after
// an ambiguous failure reads few rows (and seldom takes another caller's
// twin requested just before) where clocks agree, yet never misses its row
// where they do not. An answer's Date is stamped after its row and rounded
// down to the second, so Date - requested + 1 s bounds the lag of the
// replica that answered; each answer also bounds the Date clock against
// the client's (d - received <= offset < d + 1 s - sent). When the largest
// lower bound passes the smallest upper one, replicas' Date clocks (or the
// client's, stepped) disagree by that much, and a search listed by a
// replica ahead of the one that dated the row would miss it: the margin
// adds it. The last created rows bound a lost row more closely in a burst
// ([lag.earliest]). The zero value is ready; safe for concurrent use.
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

const (
	// lagSamples is how many rows a client sees before it trusts them to
	// search less far back than clockSkew: replicas show their clocks only
	// now and then.
	lagSamples = 16
	// earliest reads the last rowSamples rows created within rowFresh of
	// the attempt (it trusts the clocks did not step back meanwhile).
	rowSamples = 64
	rowFresh   = 30 * time.Second
	// rowApart is how far apart two clocks dating rows may be without the
	// rows showing it; it leaves room for NTP's largest slew over rowFresh.
	rowApart = 25 * time.Millisecond
)

// rowSample is a created row of a kind (Op.What): its request date, when
// its request was sent and its answer arrived on the client's clock, and
// when on the real one.
type rowSample struct {
	kind                            string
	sent, received, real, requested time.Time
}

// bounds returns the bounds a row gives of the offset of the clock that
// dated it from the client's: requested - received <= offset <=
// requested - sent, a second more for a date in whole seconds.
func (r rowSample) bounds() (lo, hi time.Duration) {
	hi = r.requested.Sub(r.sent)
	if r.requested.Nanosecond() == 0 {
		hi += time.Second
	}
	return r.requested.Sub(r.received), hi
}

// since is how long before start (client's clock), began (real clock) r's
// answer arrived: the lesser, since the service's clock follows the real
// one or, a test server's, the client's, and a test clock may move alone;
// false when longer ago than rowFresh.
func (r rowSample) since(start, began time.Time) (time.Duration, bool) {
	d, real := start.Sub(r.received), began.Sub(r.real)
	return min(d, real), d.Abs() <= rowFresh && real.Abs() <= rowFresh
}

// observe records a created row of kind, its request date and its answer's
// Date, sent and received at local times sent and received; a zero time
// (no Date, no request date) says nothing.
func (l *lag) observe(kind string, sent, received, date, requested time.Time) {
	if requested.IsZero() {
		return
	}
	row := rowSample{kind, sent, received, time.Now(), requested}
	l.mu.Lock()
	defer l.mu.Unlock()
	// A row whose bounds miss a recent row's of its kind was dated by a
	// clock apart, which the last rows may not show next time: earliest
	// says nothing from then on.
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
	l.n = min(l.n+1, lagSamples)
}

// margin is how far back of the attempt's start, on the Date clock, a
// search looks: the largest lag bound, plus the Date clocks' disagreement,
// plus a second while every date was in whole seconds (a row's own
// rounding, which other rows' bounds may not show). At least a millisecond
// (0 would mean clockSkew), and clockSkew until lagSamples rows were seen.
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
// kind that an attempt begun at start (client's clock), began (real clock)
// may have created; zero unless lagSamples rows of kind were created within
// rowFresh. A row is dated between its request and its answer, so each
// recent row's requested - received bounds its clock's offset from the
// client's; the smallest holds for every clock they came from, unrounded,
// so a burst's search reads a fraction of the Date margin's rows. Kept
// narrow: only rows of kind (another kind may have other clocks), fresh on
// both clocks, and nothing once clocks over rowApart apart were seen
// (replicas: the one behind may be missing from the last rows).
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
		// Less what the clocks may drift apart meanwhile (NTP: 500 ppm).
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
