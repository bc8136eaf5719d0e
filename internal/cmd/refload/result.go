package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// window is a run of generations and the load time they took.
type window struct {
	from, to int
	took     time.Duration
}

func (w window) rate() float64 { return float64(w.to-w.from) / w.took.Seconds() }

// latency summarises timed requests.
type latency struct{ p50, p90, mean time.Duration }

func summarize(d []time.Duration) latency {
	if len(d) == 0 {
		return latency{}
	}
	slices.Sort(d)
	var sum time.Duration
	for _, v := range d {
		sum += v
	}
	return latency{p50: d[len(d)/2], p90: d[len(d)*9/10], mean: sum / time.Duration(len(d))}
}

func (l latency) String() string {
	return fmt.Sprintf("p50 %s p90 %s mean %s", round(l.p50), round(l.p90), round(l.mean))
}

func round(d time.Duration) time.Duration {
	if d > time.Millisecond {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// point is what a checkpoint measured.
type point struct {
	stored     int
	get, page  latency
	heapPerGen float64 // bytes; negative when unknown
}

// result is one load run.
type result struct {
	label   string
	windows []window
	points  []point
}

// total returns the generations created and the load time they took.
func (r *result) total() (int, time.Duration) {
	n, d := 0, time.Duration(0)
	for _, w := range r.windows {
		n += w.to - w.from
		d += w.took
	}
	return n, d
}

func (r *result) summary(out io.Writer) {
	n, d := r.total()
	if n == 0 {
		return
	}
	fmt.Fprintf(out, "%stotal: %d pairs in %s of load: %.0f pairs/s", prefix(r.label), n, d.Round(time.Millisecond), float64(n)/d.Seconds())
	if len(r.windows) > 1 {
		fmt.Fprintf(out, "; last window %.2fx the first", r.lastFirst())
	}
	fmt.Fprintln(out)
	if len(r.points) > 1 {
		a, b := r.points[0], r.points[len(r.points)-1]
		fmt.Fprintf(out, "%sat %d vs %d stored: GET p50 %.2fx, page p50 %.2fx\n", prefix(r.label), b.stored, a.stored,
			r.getGrowth(), r.pageGrowth())
	}
	if r.label != "floor" {
		r.goals(out)
	}
}

// The goals of issue 12 for the reference server under load.
const (
	goalPairsPerSec = 5000 // from empty to the last stored
	goalLastFirst   = 0.8  // last window's rate over the first's, at least
	goalGrowth      = 1.5  // GET and page p50 at the last checkpoint over the first, at most
	goalHeapPerGen  = 2048 // bytes of live heap per finished generation, at most
)

// goals prints the run's figures against the goals.
func (r *result) goals(out io.Writer) {
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	n, d := r.total()
	rate := float64(n) / d.Seconds()
	fmt.Fprintf(out, "%sgoal pairs/s >= %d: %.0f, %s\n", prefix(r.label), goalPairsPerSec, rate, verdict(rate >= goalPairsPerSec))
	if len(r.windows) > 1 {
		v := r.lastFirst()
		fmt.Fprintf(out, "%sgoal last/first window >= %.1f: %.2f, %s\n", prefix(r.label), goalLastFirst, v, verdict(v >= goalLastFirst))
	}
	if len(r.points) > 1 {
		g, p := r.getGrowth(), r.pageGrowth()
		fmt.Fprintf(out, "%sgoal GET and page growth <= %.1fx: %.2fx, %.2fx, %s\n", prefix(r.label), goalGrowth, g, p, verdict(g <= goalGrowth && p <= goalGrowth))
	}
	if len(r.points) > 0 {
		if h := r.points[len(r.points)-1].heapPerGen; h >= 0 {
			fmt.Fprintf(out, "%sgoal heap <= %d B/generation: %.0f, %s\n", prefix(r.label), goalHeapPerGen, h, verdict(h <= goalHeapPerGen))
		}
	}
}

// lastFirst returns the last window's rate over the first's.
func (r *result) lastFirst() float64 {
	return r.windows[len(r.windows)-1].rate() / r.windows[0].rate()
}

// getGrowth returns the GET p50 at the last checkpoint over the first.
func (r *result) getGrowth() float64 {
	return float64(r.points[len(r.points)-1].get.p50) / float64(r.points[0].get.p50)
}

// pageGrowth returns the page p50 at the last checkpoint over the first.
func (r *result) pageGrowth() float64 {
	return float64(r.points[len(r.points)-1].page.p50) / float64(r.points[0].page.p50)
}

func prefix(label string) string {
	if label == "" {
		return ""
	}
	return label + ": "
}
