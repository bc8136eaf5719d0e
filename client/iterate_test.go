package client_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
)

// createN submits n image generations and returns their ids, oldest first.
func createN(t *testing.T, c *client.Client, n int, tag string) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		g, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: fmt.Sprintf("%s %d", tag, i)})
		require.NoError(t, err)
		ids[i] = g.ID
	}
	return ids
}

func reversed(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[len(ids)-1-i] = id
	}
	return out
}

func TestListGenerationsPages(t *testing.T) {
	_, c, ctx := setup(t)
	ids := createN(t, c, 7, "page")

	first, err := c.ListGenerations(ctx, client.ListParams{Limit: 3})
	require.NoError(t, err)
	require.Len(t, first.Generations, 3)
	assert.NotEmpty(t, first.NextCursor)
	assert.Equal(t, ids[6], first.Generations[0].ID, "newest first")

	var all []string
	p := client.ListParams{Limit: 3}
	for {
		page, err := c.ListGenerations(ctx, p)
		require.NoError(t, err)
		for _, g := range page.Generations {
			all = append(all, g.ID)
		}
		if page.NextCursor == "" {
			break
		}
		p.Cursor = page.NextCursor
	}
	assert.Equal(t, reversed(ids), all)

	_, err = c.ListGenerations(ctx, client.ListParams{Limit: -1})
	assert.ErrorIs(t, err, client.ErrInvalidArgument)
	_, err = c.ListGenerations(ctx, client.ListParams{Cursor: "not-a-cursor"})
	assert.ErrorIs(t, err, client.ErrInvalidArgument)
}

func TestGenerationsAcrossPagesWhileRowsAreAdded(t *testing.T) {
	_, c, ctx := setup(t)
	ids := createN(t, c, 10, "before")
	params := client.ListParams{Limit: 3, Feature: "image-generation"}

	var seen []string
	var added []string
	for g, err := range c.Generations(ctx, params) {
		require.NoError(t, err)
		seen = append(seen, g.ID)
		if len(seen)%2 == 0 {
			// Rows created meanwhile are newer than every page still to come.
			added = append(added, createN(t, c, 1, fmt.Sprintf("during %d", len(seen)))...)
		}
	}
	assert.Equal(t, reversed(ids), seen, "every row once, none of those added meanwhile")
	assert.Equal(t, client.ListParams{Limit: 3, Feature: "image-generation"}, params, "params untouched")
	assert.NotEmpty(t, added)

	var again []string
	for g, err := range c.Generations(ctx, client.ListParams{Limit: 100}) {
		require.NoError(t, err)
		again = append(again, g.ID)
	}
	assert.Len(t, again, len(ids)+len(added))
}

func TestGenerationIteratorResumes(t *testing.T) {
	_, c, ctx := setup(t)
	ids := reversed(createN(t, c, 8, "resume"))

	it := c.GenerationIterator(client.ListParams{Limit: 3})
	var got []string
	for g, err := range it.All(ctx) {
		require.NoError(t, err)
		got = append(got, g.ID)
		if len(got) == 4 {
			break
		}
	}
	assert.False(t, it.Done())
	cursor, offset := it.Cursor(), it.Offset()
	assert.NotEmpty(t, cursor)
	assert.Equal(t, 1, offset, "stopped after the first row of the second page")

	// In this process: the same iterator continues where it stopped.
	for g, err := range it.All(ctx) {
		require.NoError(t, err)
		got = append(got, g.ID)
	}
	assert.Equal(t, ids, got)
	assert.True(t, it.Done())

	// In another one: a new iterator from the cursor, skipping Offset rows.
	var resumed []string
	for g, err := range c.Generations(ctx, client.ListParams{Limit: 3, Cursor: cursor}) {
		require.NoError(t, err)
		resumed = append(resumed, g.ID)
	}
	assert.Equal(t, ids[4:], resumed[offset:])
}

func TestGenerationsYieldsErrorOnce(t *testing.T) {
	_, c, ctx := setup(t)
	n := 0
	for g, err := range c.Generations(ctx, client.ListParams{Cursor: "garbage"}) {
		n++
		assert.Nil(t, g)
		require.ErrorIs(t, err, client.ErrInvalidArgument)
	}
	assert.Equal(t, 1, n)
}

// TestGenerationsStopsWhenTheCursorDoesNotAdvance: a list that hands back the
// cursor it was given would make the loop fetch the same page forever.
func TestGenerationsStopsWhenTheCursorDoesNotAdvance(t *testing.T) {
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lists.Add(1) > 50 {
			w.WriteHeader(http.StatusInternalServerError) // keeps a broken client from spinning for good
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"generations":[{"id":"gen_1","feature":"image/generation","requestDate":"2026-01-05T09:00:00Z"}],"nextCursor":"same"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New("mg_key_123456", client.WithBaseURL(srv.URL))
	require.NoError(t, err)

	var ids []string
	var errs []error
	for g, err := range c.Generations(t.Context(), client.ListParams{}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ids = append(ids, g.ID)
	}
	assert.Equal(t, []string{"gen_1"}, ids, "the first page; the page that points at itself is refused")
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "does not advance")
	assert.EqualValues(t, 2, lists.Load())
}
