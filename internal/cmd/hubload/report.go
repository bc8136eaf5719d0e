package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/poll"
)

// Goals of issue 22, item 4.
const (
	goalRequests = 1.1                   // API requests per generation with the hub, the create included
	goalP99      = 50 * time.Millisecond // event's arrival to the wait's return, p99
)

var kinds = []mediagen.Kind{mediagen.KindImage, mediagen.KindAudio, mediagen.KindVideo}

// percentile returns the nearest-rank p-th percentile (0 < p <= 1) of d.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(d))
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// spread is p50, p99 and max of d.
func spread(d []time.Duration) string {
	if len(d) == 0 {
		return "-"
	}
	return fmt.Sprintf("%s / %s / %s", short(percentile(d, 0.5)), short(percentile(d, 0.99)), short(slices.Max(d)))
}

// short rounds d for reading: microseconds under a millisecond, then
// hundredths of milliseconds, then milliseconds.
func short(d time.Duration) string {
	a := d
	if a < 0 {
		a = -a
	}
	switch {
	case a < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case a < time.Second:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// group is the records of one side and kind (or every kind), over rounds.
type group struct {
	n, done, gets       int
	late                []time.Duration // return after the render's end
	event, recv         []time.Duration // event arrival → return; arrival → hub
	byEvent, byBackstop int             // hub side: what ended each wait
}

func (g *group) add(r *record) {
	g.n++
	if r.err == nil && r.status == mediagen.GenerationStatusDone {
		g.done++
	}
	g.gets += r.gets
	g.late = append(g.late, r.lateness())
	if d, ok := r.eventToReturn(); ok {
		g.event = append(g.event, d)
		g.recv = append(g.recv, r.handed.Sub(r.arrival))
		g.byEvent++
	} else {
		g.byBackstop++
	}
}

// collect groups records by kind ("" for all) over results of one side.
func collect(results []*sideResult, side string) map[mediagen.Kind]*group {
	out := map[mediagen.Kind]*group{"": {}}
	for _, res := range results {
		if res.side != side {
			continue
		}
		for i := range res.records {
			r := &res.records[i]
			if out[r.kind] == nil {
				out[r.kind] = &group{}
			}
			out[r.kind].add(r)
			out[""].add(r)
		}
	}
	return out
}

// totals sums requests and creates over the results of one side.
func totals(results []*sideResult, side string) (requests, gens int) {
	for _, res := range results {
		if res.side == side {
			requests += res.requests
			gens += len(res.records)
		}
	}
	return requests, gens
}

// table prints a side's groups: per kind, requests per generation (the
// create counted as one), return after the render, and on the hub side
// event to return.
func table(out io.Writer, side string, groups map[mediagen.Kind]*group, requests, gens int) {
	row := func(cells ...string) {
		line := fmt.Sprintf("%-6s %5s %12s   %-30s", cells[0], cells[1], cells[2], cells[3])
		if side == sideHub {
			line += fmt.Sprintf("   %-30s   %s", cells[4], cells[5])
		}
		fmt.Fprintln(out, strings.TrimRight(line, " "))
	}
	row("kind", "gens", "requests/gen", "after render p50 / p99 / max", "event to return p50 / p99 / max", "receiver's part p50 / p99 / max")
	for _, k := range append(slices.Clone(kinds), "") {
		g := groups[k]
		if g == nil || g.n == 0 {
			continue
		}
		name, perGen := string(k), 1+float64(g.gets)/float64(g.n)
		if k == "" {
			name, perGen = "all", float64(requests)/float64(gens)
		}
		row(name, strconv.Itoa(g.n), fmt.Sprintf("%.2f", perGen), spread(g.late), spread(g.event), spread(g.recv))
	}
}

// print writes one side's run.
func (res *sideResult) print(out io.Writer) {
	groups := collect([]*sideResult{res}, res.side)
	table(out, res.side, groups, res.requests, len(res.records))
	gets := res.requests - res.creates - res.other
	fmt.Fprintf(out, "requests: %d = %d creates + %d GETs + %d other\n", res.requests, res.creates, gets, res.other)
	switch res.side {
	case sideHub:
		all := groups[""]
		fmt.Fprintf(out, "events handed to the hub: %d; waits ended by their event: %d, by a backstop check: %d\n",
			res.delivered, all.byEvent, all.byBackstop)
	case sideDropped:
		fmt.Fprintf(out, "deliveries refused by the receiver: %d; events the server gave up on: %d\n", res.refused, res.serverDropped)
	}
}

// pairGaps is, per kind ("" for all), how much later each dropped-side wait
// returned after its render than the polling wait of the same generation
// in the same round.
func pairGaps(results []*sideResult) map[mediagen.Kind][]time.Duration {
	out := map[mediagen.Kind][]time.Duration{}
	for _, d := range results {
		if d.side != sideDropped {
			continue
		}
		for _, p := range results {
			if p.side != sidePoll || p.round != d.round {
				continue
			}
			for i := range d.records {
				if i >= len(p.records) {
					break
				}
				gap := d.records[i].lateness() - p.records[i].lateness()
				out[d.records[i].kind] = append(out[d.records[i].kind], gap)
				out[""] = append(out[""], gap)
			}
		}
	}
	return out
}

// report prints the figures of every round together and checks the goals.
func report(out io.Writer, cfg config, results []*sideResult) {
	fmt.Fprintf(out, "\n== summary: %s per side, render scale %g, %d round(s)\n", cfg.mix, cfg.scale, cfg.rounds)
	present := map[string]bool{}
	for _, res := range results {
		present[res.side] = true
	}
	byGroup := map[string]map[mediagen.Kind]*group{}
	for _, side := range allSides {
		if !present[side] {
			continue
		}
		requests, gens := totals(results, side)
		byGroup[side] = collect(results, side)
		fmt.Fprintf(out, "\n%s\n", side)
		table(out, side, byGroup[side], requests, gens)
	}
	gaps := pairGaps(results)
	if len(gaps[""]) > 0 {
		fmt.Fprintf(out, "\ndropped later than poll, same generation and round: p50 / max\n")
		for _, k := range kinds {
			if g := gaps[k]; len(g) > 0 {
				fmt.Fprintf(out, "%-6s %s / %s\n", k, short(percentile(g, 0.5)), short(slices.Max(g)))
			}
		}
	}

	fmt.Fprintln(out)
	if present[sideHub] {
		requests, gens := totals(results, sideHub)
		per := float64(requests) / float64(gens)
		line := fmt.Sprintf("goal requests per generation with the hub <= %.1f: %.2f", goalRequests, per)
		if present[sidePoll] {
			pr, pg := totals(results, sidePoll)
			line += fmt.Sprintf(" (polling alone %.2f)", float64(pr)/float64(pg))
		}
		fmt.Fprintf(out, "%s: %s\n", line, verdict(per <= goalRequests))
		ev := byGroup[sideHub][""].event
		p99 := percentile(ev, 0.99)
		fmt.Fprintf(out, "goal event to return p99 < %s: %s over %d events (%d waits ended without theirs): %s\n",
			goalP99, short(p99), len(ev), byGroup[sideHub][""].byBackstop, verdict(len(ev) > 0 && p99 < goalP99))
	}
	if present[sideDropped] {
		all := byGroup[sideDropped][""]
		line := fmt.Sprintf("goal every webhook dropped, every wait done: %d of %d", all.done, all.n)
		ok := all.done == all.n
		if g := gaps[""]; len(g) > 0 {
			worst := slices.Max(g)
			line += fmt.Sprintf(", at most %s later than polling alone: %s at worst", poll.BackstopInterval, short(worst))
			ok = ok && worst <= poll.BackstopInterval
		}
		fmt.Fprintf(out, "%s: %s\n", line, verdict(ok))
	}
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}
