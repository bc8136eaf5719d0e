package charge

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClaims(t *testing.T) {
	cs := newClaims()
	_, ok := cs.take("a")
	require.True(t, ok)
	bound := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	id, ok := cs.takeFirst([]string{"b"}, claim{bound: bound})
	require.True(t, ok)
	require.Equal(t, "b", id)

	prev, ok := cs.take("b")
	assert.False(t, ok, "an id a search claimed is not handed out again")
	assert.Equal(t, bound, prev.bound, "the loser learns where the searcher's own row lies")

	id, ok = cs.takeFirst([]string{"a", "b", "c", "d"}, claim{})
	assert.True(t, ok)
	assert.Equal(t, "c", id, "the first candidate not handed out")
	_, ok = cs.takeFirst([]string{"a", "b", "c"}, claim{})
	assert.False(t, ok)
}

func TestClaimsAreBounded(t *testing.T) {
	cs := newClaims()
	for i := range maxClaims + 10 {
		_, ok := cs.take(fmt.Sprint(i))
		require.True(t, ok)
	}
	assert.Len(t, cs.handed.ids, maxClaims)
	id, ok := cs.takeFirst([]string{"0", "9", fmt.Sprint(maxClaims + 9)}, claim{})
	assert.True(t, ok)
	assert.Equal(t, "0", id, "the oldest ids are forgotten first")
	cs = newClaims()
	for i := range maxClaims + 10 {
		_, ok := cs.takeFirst([]string{fmt.Sprint("s", i)}, claim{})
		require.True(t, ok)
	}
	assert.Len(t, cs.found, maxClaims, "what searches claimed is bounded too")
}

func TestSearchWindowBound(t *testing.T) {
	start := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	received := start.Add(2 * time.Second)
	serverNow := time.Date(2026, 1, 5, 9, 0, 10, 0, time.UTC) // a clock far from ours

	w := Window{Start: start}
	assert.Equal(t, serverNow.Add(-2*time.Second-clockSkew), w.Bound(serverNow, received),
		"the attempt's start on the service's clock, less the skew")
	assert.Equal(t, start.Add(-clockSkew), w.Bound(time.Time{}, received), "no Date header: our clock")
	floor := serverNow.Add(-time.Minute)
	assert.Equal(t, floor, Window{Start: start, Floor: floor}.Bound(serverNow, received))
	w.Margin = 1500 * time.Millisecond
	assert.Equal(t, serverNow.Add(-3500*time.Millisecond), w.Bound(serverNow, received), "a learned margin")
	assert.Equal(t, start.Add(-clockSkew), w.Bound(time.Time{}, received),
		"without a Date the margin covers our clock against the service's, which no row measures")
}

func TestLagMargin(t *testing.T) {
	date := time.Date(2026, 11, 27, 9, 0, 10, 0, time.UTC) // whole seconds, as HTTP dates are
	var l lag
	assert.Equal(t, clockSkew, l.margin(), "nothing seen yet")
	l.observeNow("", time.Time{}, time.Time{}, time.Time{}, date)
	l.observeNow("", date, date, date, time.Time{})
	assert.Equal(t, clockSkew, l.margin(), "an answer without Date or a row without date says nothing")

	// Clocks that agree: the Date is the row's second, rounded down.
	for i := range lagSamples - 1 {
		l.observeNow("", date, date, date, date.Add(time.Duration(i)*time.Millisecond+time.Millisecond))
	}
	assert.Equal(t, clockSkew, l.margin(), "too few rows to search less far back")
	l.observeNow("", date, date, date, date.Add(400*time.Millisecond))
	assert.Equal(t, time.Second-time.Millisecond, l.margin(), "the largest bound: Date - requested + 1 s")

	// One replica whose rows lag its Date by 5 s raises the margin for good.
	l.observeNow("", date.Add(5*time.Second), date.Add(5*time.Second), date.Add(5*time.Second), date.Add(200*time.Millisecond))
	assert.Equal(t, 5800*time.Millisecond, l.margin())
	l.observeNow("", date, date, date, date)
	assert.Equal(t, 5800*time.Millisecond, l.margin(), "a smaller bound does not lower it")

	// Rows dated in whole seconds hide their own rounding: a second more.
	var whole lag
	for range lagSamples {
		whole.observeNow("", date, date, date, date)
	}
	assert.Equal(t, 2*time.Second, whole.margin())

	// A lag over clockSkew shows before the margin is trusted to shrink.
	var far lag
	far.observeNow("", date.Add(10*time.Second), date.Add(10*time.Second), date.Add(10*time.Second), date.Add(time.Millisecond))
	assert.Equal(t, 11*time.Second-time.Millisecond, far.margin())
}

// Rows dated in whole seconds hide their own rounding before the margin is
// trusted too: a lag over clockSkew learned from few such rows needs the
// second more it gets after lagSamples of them. Without it, a row dated
// 5.5 s behind the Date header, requested at x.9 s and so dated x s, lies
// below a search's bound (which a 6 s margin lets reach x + 0.4 s) and is
// charged twice.
func TestLagMarginOfFewWholeSecondRows(t *testing.T) {
	date := time.Date(2026, 11, 27, 9, 0, 10, 0, time.UTC)
	var few lag
	few.observeNow("", date.Add(5*time.Second), date.Add(5*time.Second), date.Add(5*time.Second), date) // the lag may be up to 6 s
	assert.Equal(t, 7*time.Second, few.margin(), "the learned bound and a second for the row's rounding")
	for range lagSamples - 1 {
		few.observeNow("", date.Add(5*time.Second), date.Add(5*time.Second), date.Add(5*time.Second), date)
	}
	assert.Equal(t, 7*time.Second, few.margin(), "the same once trusted")
}

// Two replicas, each dating its rows and its answers by its own clock,
// one 2 s ahead of the other: every row shows a lag near zero, but a
// search listed by the replica ahead must reach 2 s further back for a row
// the other dated. The answers' Dates against the client's clock show the
// disagreement, and the margin covers it.
func TestLagMarginCoversReplicasWhoseClocksDisagree(t *testing.T) {
	base := time.Date(2026, 11, 27, 9, 0, 10, 0, time.UTC)
	var l lag
	for k := range lagSamples {
		now := base.Add(time.Duration(k) * 250 * time.Millisecond) // the client's clock, true time
		ahead := time.Duration(k%2) * 2 * time.Second              // odd answers from the replica ahead
		at := now.Add(ahead)
		l.observeNow("", now.Add(-5*time.Millisecond), now.Add(5*time.Millisecond), at.Truncate(time.Second), at)
	}
	// Largest lag bound 1 s; Dates from the replica ahead come up to
	// 1.745 s past the client's clock, from the other at most 0.505 s.
	assert.Equal(t, 2240*time.Millisecond, l.margin())
	assert.Greater(t, l.margin(), 2*time.Second, "the replicas' 2 s apart is covered")

	var one lag
	for k := range lagSamples {
		now := base.Add(time.Duration(k) * 250 * time.Millisecond)
		one.observeNow("", now.Add(-5*time.Millisecond), now.Add(5*time.Millisecond), now.Truncate(time.Second), now)
	}
	assert.Equal(t, time.Second, one.margin(), "one clock: its bounds overlap, nothing added")
}

// The client's recent rows bound a lost row's date more tightly than the
// Date header: the smallest requested - received, moved to the attempt's
// start, holds for every clock the rows came from; clocks seen more than
// rowApart apart leave it to the Date.
func TestLagEarliest(t *testing.T) {
	base := time.Date(2026, 11, 27, 9, 0, 10, 0, time.UTC)
	start := base.Add(10 * time.Second)
	began := time.Now().Add(25 * time.Second) // the real clock ran as far as the rows' clock, or further
	var l lag
	for k := range lagSamples - 1 {
		at := base.Add(time.Duration(k) * 100 * time.Millisecond)
		l.observeNow("", at.Add(-20*time.Millisecond), at, time.Time{}, at.Add(-7*time.Millisecond+time.Second)) // a clock 1 s ahead
	}
	assert.True(t, l.earliest("", start, began).IsZero(), "too few rows")
	behind := base.Add(2 * time.Second)
	l.observeNow("", behind.Add(-20*time.Millisecond), behind, time.Time{}, behind.Add(time.Second-15*time.Millisecond)) // a replica a few ms behind
	got := l.earliest("", start, began)
	want := start.Add(time.Second - 15*time.Millisecond - 4*time.Millisecond - rowApart) // less 500 ppm of the 8 s since that row
	assert.Equal(t, want, got, "the clock furthest behind bounds it, less what clocks may be apart unseen")
	assert.True(t, l.earliest("", start.Add(rowFresh+time.Minute), began).IsZero(), "rows older than rowFresh say nothing")

	// A replica 0.3 s behind: its row's bounds miss the others'. The rows
	// after it may all come from the clock ahead, so nothing more is said.
	l.observeNow("", behind.Add(-20*time.Millisecond), behind, time.Time{}, behind.Add(-300*time.Millisecond))
	for k := range rowSamples {
		at := behind.Add(time.Duration(k) * 10 * time.Millisecond)
		l.observeNow("", at.Add(-20*time.Millisecond), at, time.Time{}, at.Add(-7*time.Millisecond+time.Second))
	}
	assert.True(t, l.earliest("", start, began).IsZero(), "clocks apart: the Date's bound alone")

	var whole lag
	for k := range lagSamples {
		at := base.Add(time.Duration(k) * time.Second)
		whole.observeNow("", at, at, time.Time{}, at)
	}
	assert.Equal(t, base.Add(20*time.Second-time.Second-10*time.Millisecond-rowApart), whole.earliest("", base.Add(20*time.Second), began),
		"rows dated in whole seconds: a second more for the lost row's rounding")

	w := Window{Start: start, Margin: time.Second, Earliest: got}
	serverNow := start.Add(-200 * time.Millisecond) // the Date of an answer received at start, rounded down
	assert.Equal(t, got, w.Bound(serverNow, start), "the later bound: the rows'")
	w.Earliest = serverNow.Add(-time.Hour)
	assert.Equal(t, serverNow.Add(-time.Second), w.Bound(serverNow, start), "the later bound: the Date's")
	w.Earliest = start
	assert.Equal(t, start, w.Bound(time.Time{}, start), "without a Date too")
	w.Floor = base
	assert.Equal(t, base, w.Bound(serverNow, start), "a floor is kept as is")
}

// A long-lived client whose clock drifts from the service's (10 ppm, an
// hour: 36 ms) keeps its rows' bound: rows are compared only with rows as
// recent as they, where the drift is a fraction of a millisecond.
func TestLagEarliestOutlivesDrift(t *testing.T) {
	base := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	var l lag
	var at time.Time
	t0 := time.Now()
	for k := range 3600 {
		at = base.Add(time.Duration(k)*time.Second + time.Duration(k*37%1000)*time.Millisecond)
		served := at.Add(time.Second + at.Sub(base)/100_000) // the service's clock: 1 s ahead, gaining 10 ppm
		l.observeNow("", at.Add(-time.Millisecond), at.Add(time.Millisecond), served.Truncate(time.Second), served)
	}
	assert.Greater(t, l.lo, l.hi, "the Date bounds no longer overlap")
	start := at.Add(time.Second)
	got := l.earliest("", start, t0.Add(rowFresh)) // the rows came in the last half minute of real time
	require.False(t, got.IsZero())
	offset := time.Second + at.Sub(base)/100_000
	assert.False(t, got.After(start.Add(offset)), "never past the lost row")
	assert.WithinDuration(t, start.Add(offset), got, 70*time.Millisecond, "the round trip, drift allowance and rowApart only")
}

// The laps' envelopes only spare comparisons: a lag finds clocks apart
// exactly when comparing the row with each row in the ring would.
func TestLagApartAsWithEveryRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	for trial := range 300 {
		var l lag
		var ring [rowSamples]rowSample
		next, apart := 0, false
		at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
		offset := time.Second
		for k := range 400 {
			at = at.Add(time.Duration(rng.IntN(200)) * time.Millisecond)
			switch rng.IntN(60) {
			case 0: // a clock 30 ms apart
				offset += 30 * time.Millisecond
			case 1: // idle past rowFresh
				at = at.Add(rowFresh + time.Second)
			}
			kind := "generation"
			if rng.IntN(8) == 0 {
				kind = "voice"
			}
			requested := at.Add(offset + time.Duration(rng.IntN(5))*time.Millisecond)
			if rng.IntN(4) == 0 {
				requested = requested.Truncate(time.Second)
			}
			sent, received := at.Add(-3*time.Millisecond), at
			row := newRowSample(kind, sent, received, time.Now(), requested)
			for _, r := range ring {
				if !apart && r.kind == kind && (row.lo > r.hi+rowApart || r.lo > row.hi+rowApart) {
					_, apart = r.since(received, row.real)
				}
			}
			ring[next], next = row, (next+1)%rowSamples
			l.observeNow(kind, sent, received, time.Time{}, requested)
			require.Equal(t, apart, l.apart, "trial %d, row %d", trial, k)
		}
	}
}

func TestSearchLocksHonourTheContext(t *testing.T) {
	l := newSearchLocks()
	unlock, err := l.lock(context.Background(), "k")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = l.lock(ctx, "k")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	unlock()
	unlock2, err := l.lock(context.Background(), "k")
	require.NoError(t, err)
	unlock2()
}

// observeNow is observe of an answer received now, in real time.
func (l *lag) observeNow(kind string, sent, received, date, requested time.Time) {
	l.observe(kind, sent, received, time.Now(), date, requested)
}
