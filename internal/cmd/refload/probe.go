package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxWalkPages caps the walk that collects cursors at a checkpoint.
const maxWalkPages = 2000

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
