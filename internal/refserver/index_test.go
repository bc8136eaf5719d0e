package refserver

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/feature"
)

// testRow is ordered by key, descending, as lists are newest first.
type testRow struct{ key int }

func (r *testRow) before(o *testRow) bool { return r.key > o.key }

func collect(x *rowIndex[*testRow]) []int {
	var keys []int
	for r := range x.All() {
		keys = append(keys, r.key)
	}
	return keys
}

func TestRowIndexMatchesASortedSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var x rowIndex[*testRow]
	var want []*testRow // descending by key
	byKey := map[int]*testRow{}
	for step := range 20000 {
		if len(want) > 0 && rng.IntN(3) == 0 {
			r := want[rng.IntN(len(want))]
			require.True(t, x.Remove(r))
			want = slices.DeleteFunc(want, func(o *testRow) bool { return o == r })
			delete(byKey, r.key)
		} else {
			k := rng.IntN(1 << 20)
			if byKey[k] != nil {
				continue
			}
			r := &testRow{key: k}
			byKey[k] = r
			x.Insert(r)
			i, _ := slices.BinarySearchFunc(want, k, func(o *testRow, k int) int { return k - o.key })
			want = slices.Insert(want, i, r)
		}
		if step%997 == 0 {
			keys := make([]int, len(want))
			for i, r := range want {
				keys[i] = r.key
			}
			require.Equal(t, keys, collect(&x))
		}
	}
	require.Equal(t, len(want), x.Len())
	assert.False(t, x.Remove(&testRow{key: -1}), "absent rows are not removed")

	// Every page from every cursor position is what the slice says.
	for range 200 {
		c := rng.IntN(1 << 20)
		limit := 1 + rng.IntN(120)
		got, more := x.Page(func(r *testRow) bool { return r.key < c }, limit)
		i, _ := slices.BinarySearchFunc(want, c, func(o *testRow, c int) int {
			if o.key < c {
				return 1
			}
			return -1
		})
		end := min(i+limit, len(want))
		assert.Equal(t, want[i:end], got)
		assert.Equal(t, end < len(want), more)
	}
	first, more := x.Page(nil, 5)
	assert.Equal(t, want[:5], first)
	assert.True(t, more)
}

func TestRowIndexKeepsBlocksFewAfterDeletes(t *testing.T) {
	var x rowIndex[*testRow]
	rows := make([]*testRow, 10*blockSize)
	for i := range rows {
		rows[i] = &testRow{key: i}
		x.Insert(rows[i])
	}
	for i, r := range rows {
		if i%10 != 0 {
			require.True(t, x.Remove(r))
		}
	}
	assert.Equal(t, len(rows)/10, x.Len())
	assert.LessOrEqual(t, len(x.blocks), 2, "sparse blocks are merged")
	for i, r := range rows {
		if i%10 == 0 {
			require.True(t, x.Remove(r))
		}
	}
	assert.Zero(t, x.Len())
	assert.Nil(t, x.blocks)
}

type testTimed struct {
	timer
	name string
}

func TestTimersPopInDueOrder(t *testing.T) {
	var ts timers
	at := func(s int) time.Time { return testStart.Add(time.Duration(s) * time.Second) }
	a, b, c, d := &testTimed{name: "a"}, &testTimed{name: "b"}, &testTimed{name: "c"}, &testTimed{name: "d"}
	ts.schedule(a, at(3))
	ts.schedule(b, at(1))
	ts.schedule(c, at(3)) // due with a, scheduled after it
	ts.schedule(d, at(2))
	ts.schedule(b, at(5)) // moved
	ts.cancel(d)
	ts.cancel(d) // twice is harmless
	assert.Nil(t, ts.next(at(2)), "nothing due yet")

	var got []string
	for r := ts.next(at(4)); r != nil; r = ts.next(at(4)) {
		got = append(got, r.(*testTimed).name)
	}
	assert.Equal(t, []string{"a", "c"}, got)
	assert.Equal(t, 1, ts.Len())
	assert.Same(t, b, ts.next(at(5)))
	assert.Zero(t, b.pos, "a popped row is not scheduled")
}

func TestDeletedAndExpiredRowsLeaveTheIndexes(t *testing.T) {
	h := newHarness(t)
	var ids []string
	for i := range 6 {
		feat := "image/generation"
		if i%2 == 1 {
			feat = "image-generation" // legacy spelling, same index
		}
		ids = append(ids, h.mustCreate(keyA, feat, map[string]any{"prompt": "p"}).ID)
	}
	h.srv.mu.Lock()
	p := h.srv.projects[keyA]
	assert.Equal(t, 6, p.gens.Len())
	assert.Equal(t, 6, p.byFeature["image/generation"].Len())
	assert.Equal(t, 6, h.srv.timers.Len())
	h.srv.mu.Unlock()

	// A running generation deleted keeps its timer until its render ends.
	del := func(id string) {
		resp, err := h.client(keyA).DeleteGenerationWithResponse(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode())
	}
	del(ids[0])
	h.srv.mu.Lock()
	assert.Equal(t, 5, p.gens.Len())
	assert.Equal(t, 5, p.byFeature["image/generation"].Len())
	assert.Equal(t, 6, h.srv.timers.Len())
	h.srv.mu.Unlock()

	h.advance(time.Minute)
	del(ids[1]) // finished: gone at once, timer included
	h.srv.mu.Lock()
	assert.Equal(t, 4, p.gens.Len())
	assert.Equal(t, 4, h.srv.timers.Len(), "one expiry timer per remaining row")
	assert.Len(t, h.srv.gens, 4)
	h.srv.mu.Unlock()

	h.advance(24 * time.Hour)
	h.srv.mu.Lock()
	defer h.srv.mu.Unlock()
	assert.Zero(t, p.gens.Len())
	assert.Zero(t, p.byFeature["image/generation"].Len())
	assert.Zero(t, h.srv.timers.Len())
	assert.Empty(t, h.srv.gens)
}

func TestListPagesAcrossBlocks(t *testing.T) {
	h := newHarness(t)
	h.srv.SetBalance(keyA, 1e6)
	h.srv.mu.Lock()
	ctx := contextWithProject(h.srv.projects[keyA])
	h.srv.mu.Unlock()
	type row struct {
		id, feature string
		at          time.Time
	}
	var rows []row
	n := 3*blockSize + 17
	for i := range n {
		feat := []string{"image/generation", "image-generation", "image/youtube-thumbnail"}[i%3]
		resp, err := h.srv.CreateGeneration(ctx, createRequest(feat, map[string]any{"prompt": "p"}))
		require.NoError(t, err)
		g := resp.(api.CreateGeneration200JSONResponse).Generation
		rows = append(rows, row{g.ID, feature.Canonical(feat), g.RequestDate})
		switch {
		case i%97 == 0:
			h.clock.Advance(-time.Minute) // rows land in the middle of the order
		case i%5 == 0:
			h.clock.Advance(time.Millisecond) // others share a timestamp
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		if newestFirst(a.at, a.id, b.at, b.id) {
			return -1
		}
		return 1
	})

	walk := func(filter string) []string {
		var ids []string
		params := &api.ListGenerationsParams{Limit: 100}
		if filter != "" {
			params.Feature = filter
		}
		for {
			resp, err := h.client(keyA).ListGenerationsWithResponse(t.Context(), params)
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode(), string(resp.Body))
			for _, g := range resp.JSON200.Generations {
				ids = append(ids, g.ID)
			}
			if resp.JSON200.NextCursor == nil {
				return ids
			}
			params.Cursor = *resp.JSON200.NextCursor
		}
	}
	want := func(canonical string) []string {
		var ids []string
		for _, r := range rows {
			if canonical == "" || r.feature == canonical {
				ids = append(ids, r.id)
			}
		}
		return ids
	}
	assert.Equal(t, want(""), walk(""))
	assert.Equal(t, want("image/generation"), walk("image-generation"), "the legacy spelling reads the same index")
	assert.Equal(t, want("image/youtube-thumbnail"), walk("image/youtube-thumbnail"))
	assert.Empty(t, walk("video/avatar"))
}
