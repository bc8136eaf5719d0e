package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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
	return time.Since(start), context.Cause(ctx)
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
