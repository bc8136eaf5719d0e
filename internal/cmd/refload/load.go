package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// prompt is the prompt of every generation submitted, of a typical length;
// the worker appends its number.
const prompt = "a lighthouse on a cliff at dusk, warm light, long exposure, gulls "

// maxWalkPages caps the walk that collects cursors at a checkpoint.
const maxWalkPages = 2000

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
		first, last := r.windows[0], r.windows[len(r.windows)-1]
		fmt.Fprintf(out, "; last window %.2fx the first", last.rate()/first.rate())
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

// loader drives one server.
type loader struct {
	c      config
	base   string
	client *http.Client
	ids    []string
}

// load creates c.n generations with c.workers workers, printing each window
// and checkpoint as it completes. The result holds what was measured even
// when it fails half way.
func load(ctx context.Context, c config, out io.Writer) (*result, error) {
	l := &loader{c: c, base: strings.TrimRight(c.url, "/"), client: newClient(c.workers), ids: make([]string, c.n)}
	defer l.client.CloseIdleConnections()
	res := &result{}
	if code, body, err := l.do(ctx, http.MethodGet, "/v3/generations?limit=1", nil, nil); err != nil || code != http.StatusOK {
		return res, fmt.Errorf("cannot list generations at %s: %d %.200s %v", l.base, code, body, err)
	}
	heap0 := -1.0
	if c.debugURL != "" {
		h, err := l.heap(ctx)
		if err != nil {
			return res, err
		}
		heap0 = h
	}
	fmt.Fprintf(out, "%d generations, %d workers; window of %d\n", c.n, c.workers, c.window)

	var cur window
	from := 0
	for _, to := range boundaries(c.n, c.window, c.checkpoints) {
		took, err := l.segment(ctx, from, to)
		cur.took += took
		if err != nil {
			return res, err
		}
		if to%c.window == 0 || to == c.n {
			cur.from, cur.to = (to-1)/c.window*c.window, to
			res.windows = append(res.windows, cur)
			fmt.Fprintf(out, "window %7d-%-7d %8.0f pairs/s\n", cur.from, cur.to, cur.rate())
			cur = window{}
		}
		from = to
		if !slices.Contains(c.checkpoints, to) {
			continue
		}
		p, err := l.probe(ctx, to, heap0)
		if err != nil {
			return res, err
		}
		res.points = append(res.points, p)
		heap := "heap unknown (no -debug-url)"
		if p.heapPerGen >= 0 {
			heap = fmt.Sprintf("heap %.0f B/generation", p.heapPerGen)
		}
		fmt.Fprintf(out, "at %7d stored: GET %s; 100-row page %s; %s\n", to, p.get, p.page, heap)
	}
	return res, nil
}

// boundaries returns where the load stops: every window's end and every
// checkpoint up to n, sorted, n last.
func boundaries(n, window int, checkpoints []int) []int {
	var b []int
	for k := window; k < n; k += window {
		b = append(b, k)
	}
	for _, p := range checkpoints {
		if p < n {
			b = append(b, p)
		}
	}
	b = append(b, n)
	slices.Sort(b)
	return slices.Compact(b)
}

// segment creates generations from..to-1 with every worker busy, and
// returns how long it took.
func (l *loader) segment(ctx context.Context, from, to int) (time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	next.Store(int64(from))
	var wg sync.WaitGroup
	start := time.Now()
	for range min(l.c.workers, to-from) {
		wg.Go(func() {
			var body bytes.Buffer
			for {
				i := int(next.Add(1) - 1)
				if i >= to || ctx.Err() != nil {
					return
				}
				id, err := l.pair(ctx, i, &body)
				if err != nil {
					cancel(err)
					return
				}
				l.ids[i] = id
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	if err := context.Cause(ctx); err != nil {
		return took, err
	}
	return took, nil
}

// pair submits generation i and reads it back, returning its id.
func (l *loader) pair(ctx context.Context, i int, buf *bytes.Buffer) (string, error) {
	req := `{"feature":"image/generation","args":{"prompt":"` + prompt + strconv.Itoa(i) + `","aspectRatio":"16:9"}}`
	code, body, err := l.do(ctx, http.MethodPost, "/v3/generations", strings.NewReader(req), buf)
	if err != nil {
		return "", err
	}
	switch code {
	case http.StatusOK:
	case http.StatusPaymentRequired:
		return "", errors.New("the project's balance ran out: start the server with a larger -balance")
	default:
		return "", fmt.Errorf("create answered %d: %.200s", code, body)
	}
	id, ok := generationID(body)
	if !ok {
		return "", fmt.Errorf("no generation id in %.200s", body)
	}
	code, body, err = l.do(ctx, http.MethodGet, "/v3/generations/"+id, nil, buf)
	if err != nil {
		return "", err
	}
	if code != http.StatusOK {
		return "", fmt.Errorf("get %s answered %d: %.200s", id, code, body)
	}
	return id, nil
}

// generationID finds the id of {"generation": {...}} without decoding the
// whole body: "id" is the generation's first key of that name (params are
// this command's own, without one), so the load generator spends little of
// the CPU it shares with the server.
func generationID(body []byte) (string, bool) {
	_, rest, ok := bytes.Cut(body, []byte(`"id":"`))
	if !ok {
		return "", false
	}
	id, _, ok := bytes.Cut(rest, []byte(`"`))
	return string(id), ok && len(id) > 0
}

// do sends one request and reads the whole answer into buf (a fresh buffer
// when nil); the returned body aliases buf.
func (l *loader) do(ctx context.Context, method, path string, body io.Reader, buf *bytes.Buffer) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, l.base+path, body)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", l.c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, buf.Bytes(), nil
}

// probe times GETs of random stored generations and 100-row pages from
// random cursors, one request at a time with the load paused, once the
// newest generation finished (so no transition is pending), and then reads
// the heap. GETs and pages alternate, so that both sample the same stretch
// of the server's life: a collection of a large heap lasts long enough to
// slow a short run of one kind only.
func (l *loader) probe(ctx context.Context, stored int, heap0 float64) (point, error) {
	p := point{stored: stored, heapPerGen: -1}
	var buf bytes.Buffer
	cursors := []string{""}
	for len(cursors) < maxWalkPages {
		next, err := l.page(ctx, cursors[len(cursors)-1], &buf)
		if err != nil {
			return p, err
		}
		if next == "" {
			break
		}
		cursors = append(cursors, next)
	}
	if len(cursors) > 1 {
		cursors = cursors[:len(cursors)-1] // the last page may be short
	}
	if err := l.awaitDone(ctx, l.ids[stored-1]); err != nil {
		return p, err
	}

	rng := rand.New(rand.NewPCG(uint64(stored), 7))
	gets := make([]time.Duration, 0, l.c.probes)
	pages := make([]time.Duration, 0, l.c.probes)
	for i := range l.c.probes {
		for k := range 2 {
			if (i+k)%2 == 0 {
				id := l.ids[rng.IntN(stored)]
				t0 := time.Now()
				code, body, err := l.do(ctx, http.MethodGet, "/v3/generations/"+id, nil, &buf)
				gets = append(gets, time.Since(t0))
				if err != nil || code != http.StatusOK {
					return p, fmt.Errorf("probe GET %s: %d %.200s %v", id, code, body, err)
				}
				continue
			}
			c := cursors[rng.IntN(len(cursors))]
			t0 := time.Now()
			if _, err := l.page(ctx, c, &buf); err != nil {
				return p, err
			}
			pages = append(pages, time.Since(t0))
		}
	}
	p.get, p.page = summarize(gets), summarize(pages)

	if heap0 >= 0 {
		h, err := l.heap(ctx)
		if err != nil {
			return p, err
		}
		p.heapPerGen = (h - heap0) / float64(stored)
	}
	return p, nil
}

// page reads one page of 100 from cursor and returns its nextCursor.
func (l *loader) page(ctx context.Context, cursor string, buf *bytes.Buffer) (string, error) {
	path := "/v3/generations?limit=100"
	if cursor != "" {
		path += "&cursor=" + url.QueryEscape(cursor)
	}
	code, body, err := l.do(ctx, http.MethodGet, path, nil, buf)
	if err != nil || code != http.StatusOK {
		return "", fmt.Errorf("page: %d %.200s %v", code, body, err)
	}
	var page struct {
		NextCursor *string `json:"nextCursor"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return "", fmt.Errorf("page: %w", err)
	}
	if page.NextCursor == nil {
		return "", nil
	}
	return *page.NextCursor, nil
}

// awaitDone polls generation id until it is done, so that probes and the
// heap see every generation finished (they all render for the same time).
func (l *loader) awaitDone(ctx context.Context, id string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		code, body, err := l.do(ctx, http.MethodGet, "/v3/generations/"+id, nil, nil)
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("await %s: %d %.200s %v", id, code, body, err)
		}
		if bytes.Contains(body, []byte(`"status":"done"`)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("generation %s did not finish within a minute; is -render-scale small?", id)
}

// heap reads the server's live heap, after a collection, from its debug
// listener.
func (l *loader) heap(ctx context.Context) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(l.c.debugURL, "/")+"/debug/heap", nil)
	if err != nil {
		return 0, err
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("heap: %w", err)
	}
	defer resp.Body.Close()
	var h struct {
		HeapAlloc uint64 `json:"heapAlloc"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("heap: %d %v", resp.StatusCode, err)
	}
	return float64(h.HeapAlloc), nil
}
