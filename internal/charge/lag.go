package charge

import (
	"sync"
	"time"
)

// lag learns how far the clock dating rows runs behind the Date header, so
// a search reads few rows (seldom taking another caller's twin) where the
// service's clocks agree, yet finds its row where they do not. A Date is
// stamped after the row, rounded down: Date - requested + 1 s bounds the
// answering replica's lag. Answers also bound the Date clock against the
// client's (d - received <= offset < d + 1 s - sent); bounds that cross
// show Date clocks apart (replicas, or the client's stepped), which the
// margin adds, lest a replica ahead list past the row. The zero value is
// ready; safe for concurrent use.
type lag struct {
	mu      sync.Mutex
	n       int
	worst   time.Duration // the largest Date - requested + 1 s
	lo, hi  time.Duration // the tightest bounds of Date - the client's clock
	precise bool          // a row's date had a fraction of a second

	rows  [rowSamples]rowSample // the latest created rows, a ring
	next  int                   // where the next one goes
	laps  [2]envelope           // of the ring's rows: this lap's, the last lap's
	apart bool                  // rows of one kind were seen dated by clocks apart
}

// envelope is the tightest bounds of a set of rows: a row within rowApart
// of it is within rowApart of each of them, with no need to look at each.
type envelope struct {
	lo, hi time.Duration // the largest lo, the smallest hi
	set    bool
}

func (e envelope) holds(r rowSample) bool {
	return !e.set || r.lo <= e.hi+rowApart && e.lo <= r.hi+rowApart
}

func (e *envelope) add(r rowSample) {
	if !e.set {
		*e = envelope{lo: r.lo, hi: r.hi, set: true}
	}
	e.lo, e.hi = max(e.lo, r.lo), min(e.hi, r.hi)
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
	kind                      string
	received, real, requested time.Time
	lo, hi                    time.Duration // see newRowSample
}

// newRowSample keeps the bounds a row gives of the offset of the clock that
// dated it from the client's: requested - received <= offset <=
// requested - sent, a second more for a date in whole seconds.
func newRowSample(kind string, sent, received, real, requested time.Time) rowSample {
	r := rowSample{kind: kind, received: received, real: real, requested: requested}
	r.lo, r.hi = requested.Sub(received), requested.Sub(sent)
	if requested.Nanosecond() == 0 {
		r.hi += time.Second
	}
	return r
}

// since is how long before start (client's clock), began (real) r's answer
// arrived, the lesser (the service's clock follows the real one, or a test
// server's the client's); false when over rowFresh ago.
func (r rowSample) since(start, began time.Time) (time.Duration, bool) {
	d, real := start.Sub(r.received), began.Sub(r.real)
	return min(d, real), d.Abs() <= rowFresh && real.Abs() <= rowFresh
}

// observe records a created row of kind, its request date and its answer's
// Date, sent and received at local times sent and received (real time
// real); a zero time (no Date, no request date) says nothing.
func (l *lag) observe(kind string, sent, received, real, date, requested time.Time) {
	if requested.IsZero() {
		return
	}
	row := newRowSample(kind, sent, received, real, requested)
	l.mu.Lock()
	defer l.mu.Unlock()
	// A row whose bounds miss a recent row's of its kind was dated by a
	// clock apart, which the last rows may not show next time: earliest
	// says nothing from then on. Rows within the laps' envelopes agree with
	// every row in the ring, as most do: only the others are compared one
	// by one.
	agrees := l.laps[0].holds(row) && l.laps[1].holds(row)
	for i := 0; i < rowSamples && !l.apart && !agrees; i++ { // apart stays: once seen, no need to look
		r := &l.rows[i]
		if r.kind != kind || row.lo <= r.hi+rowApart && r.lo <= row.hi+rowApart {
			continue
		}
		_, l.apart = r.since(received, row.real) // only a fresh row's clock counts
	}
	l.rows[l.next] = row
	l.laps[0].add(row)
	if l.next = (l.next + 1) % rowSamples; l.next == 0 {
		l.laps = [2]envelope{{}, l.laps[0]}
	}
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
// kind an attempt begun at start (client's clock), began (real) may have
// created; zero unless lagSamples rows of kind were created within
// rowFresh. Each recent row's requested - received bounds its clock's
// offset, unrounded, so a burst's search reads far fewer rows than the
// Date margin's. Only rows of kind count (another may have other clocks),
// and none once clocks over rowApart apart were seen: the one behind may
// be missing from the last rows.
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
