package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/charge"
)

// listServer serves rows newest first, 100 a page: row i (0 newest) was
// requested i seconds before t0, with prompt "a" when i is even and "b"
// when odd. Each list request first calls gate.
func listServer(t *testing.T, rows int, t0 time.Time, gate func()) (*Client, *atomic.Int32) {
	t.Helper()
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lists.Add(1)
		gate()
		from, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		var page struct {
			Generations []mediagen.Generation `json:"generations"`
			NextCursor  *string               `json:"nextCursor"`
		}
		for i := from; i < min(from+100, rows); i++ {
			prompt := map[bool]string{true: "a", false: "b"}[i%2 == 0]
			page.Generations = append(page.Generations, mediagen.Generation{ID: fmt.Sprintf("gen_%d", i),
				Feature: mediagen.FeatureImageGeneration, Params: map[string]any{"prompt": prompt},
				RequestDate: t0.Add(-time.Duration(i) * time.Second)})
		}
		if from+100 < rows {
			next := strconv.Itoa(from + 100)
			page.NextCursor = &next
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(page)
	}))
	t.Cleanup(srv.Close)
	c, err := New("mg_key_for_scan_tests", WithBaseURL(srv.URL))
	require.NoError(t, err)
	return c, &lists
}

// Searches of one feature waiting at the same time share a listing that
// reads as deep as the deepest of them, and each gets only its own
// matches inside its own window, oldest first.
func TestSearchesShareListings(t *testing.T) {
	const searches = 50
	t0 := time.Now().Truncate(time.Second)
	var c *Client
	waiting := func() int { return c.listing.Waiting(string(mediagen.FeatureImageGeneration)) }
	var once sync.Once
	c, lists := listServer(t, 1_000, t0, func() {
		// The first listing answers once every search waits, so the
		// others wait for the one listing after it.
		once.Do(func() {
			for waiting() < searches {
				time.Sleep(time.Millisecond)
			}
		})
	})
	type result struct {
		rows  []*mediagen.Generation
		bound time.Time
		err   error
	}
	res := make([]result, searches)
	var wg sync.WaitGroup
	for i := range searches {
		// Search i looks back 10*(i+1) seconds, for "a" or "b".
		want := map[string]any{"prompt": map[bool]string{true: "a", false: "b"}[i%2 == 0]}
		win := charge.Window{Floor: t0.Add(-time.Duration(10*(i+1)) * time.Second)}
		wg.Go(func() {
			r := &res[i]
			r.rows, r.bound, r.err = c.findGenerations(t.Context(), c.search, mediagen.FeatureImageGeneration, want, win)
		})
	}
	wg.Wait()
	// The deepest search reaches row 500, on page 6: two listings at most.
	assert.LessOrEqual(t, int(lists.Load()), 2*6)
	for i, r := range res {
		require.NoError(t, r.err)
		deepest := 10 * (i + 1)
		assert.True(t, r.bound.Equal(t0.Add(-time.Duration(deepest)*time.Second)))
		// Rows 0..deepest of the search's parity, oldest first.
		var ids []string
		for j := deepest; j >= 0; j-- {
			if j%2 == i%2 {
				ids = append(ids, fmt.Sprintf("gen_%d", j))
			}
		}
		var got []string
		for _, g := range r.rows {
			got = append(got, g.ID)
		}
		assert.Equal(t, ids, got, "search %d", i)
	}
	assert.Zero(t, waiting(), "no search left waiting")
}

// A search whose caller stops waiting returns at once; a listing no one
// waits for any more stops.
func TestSearchStopsWithItsCaller(t *testing.T) {
	release := make(chan struct{})
	c, lists := listServer(t, 1_000, time.Now(), func() { <-release })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, _, err := c.findGenerations(ctx, c.search, mediagen.FeatureImageGeneration, map[string]any{"prompt": "a"},
			charge.Window{Floor: time.Now().Add(-time.Hour)})
		done <- err
	}()
	require.Eventually(t, func() bool { return lists.Load() == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	close(release)
	require.Eventually(t, c.listing.Idle, 5*time.Second, time.Millisecond)
	assert.EqualValues(t, 1, lists.Load(), "the listing stopped with its last caller")
}

// Searches in a burst share listings even when they do not fail at the
// same moment: a listing of a feature searched moments ago first waits a
// little for others to join.
func TestSearchesInABurstShareAListing(t *testing.T) {
	t0 := time.Now()
	c, lists := listServer(t, 10, t0, func() {})
	search := func() {
		_, _, err := c.findGenerations(t.Context(), c.search, mediagen.FeatureImageGeneration, map[string]any{"prompt": "a"},
			charge.Window{Floor: t0.Add(-time.Minute)})
		assert.NoError(t, err)
	}
	search()
	require.EqualValues(t, 1, lists.Load(), "a lone search lists at once")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(search)
		time.Sleep(40 * time.Millisecond)
	}
	wg.Wait()
	assert.EqualValues(t, 2, lists.Load(), "the four later ones, 40 ms apart, in one listing")
}
