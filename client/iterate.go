package client

import (
	"context"
	"fmt"
	"iter"
	"net/http"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
)

// maxPageSize is the largest page the service serves.
const maxPageSize = 100

// ListParams selects generations. The zero value lists all of them, newest
// first, 24 to a page.
type ListParams struct {
	Feature mediagen.Feature // only this feature; either spelling matches the same rows
	Limit   int              // page size, 1 to 100; 0 means the service default (24); more is clamped to 100
	Cursor  string           // a NextCursor from an earlier page, to continue after it; "" starts at the newest
}

// GenerationPage is one page of generations, newest first.
type GenerationPage struct {
	Generations []*mediagen.Generation
	NextCursor  string // pass as ListParams.Cursor for the next page; "" on the last page
}

// ListGenerations returns one page of the project's generations, newest
// first. Pages are keyed, so rows created meanwhile shift nothing: none is
// skipped or repeated. Generations drop out 24 hours after their request.
func (c *Client) ListGenerations(ctx context.Context, p ListParams, opts ...Option) (*GenerationPage, error) {
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
	pg, _, err := c.listGenerations(ctx, cfg, p)
	return pg, err
}

func (c *Client) listGenerations(ctx context.Context, cfg *config, p ListParams) (*GenerationPage, *http.Response, error) {
	if p.Limit < 0 {
		return nil, nil, fmt.Errorf("%w: negative limit %d", ErrInvalidArgument, p.Limit)
	}
	var list api.GenerationList
	r := c.listGenerationsRequest(p)
	resp, err := c.do(ctx, cfg, &r, &list)
	if err != nil {
		return nil, nil, err
	}
	pg := &GenerationPage{Generations: pointers(list.Generations)}
	if list.NextCursor != nil {
		pg.NextCursor = *list.NextCursor
	}
	if pg.NextCursor != "" && pg.NextCursor == p.Cursor {
		return nil, nil, fmt.Errorf("mediagen: GET /v3/generations: the next cursor is the one sent (%q); the list does not advance", p.Cursor)
	}
	return pg, resp, nil
}

// Generations returns every generation p selects, newest first, fetching
// pages as the loop needs them; p is not changed. An error is yielded once
// and ends the sequence. A [GenerationIterator] can also stop and resume.
func (c *Client) Generations(ctx context.Context, p ListParams, opts ...Option) iter.Seq2[*mediagen.Generation, error] {
	return c.GenerationIterator(p, opts...).All(ctx)
}

// GenerationIterator walks the pages of generations and remembers where it
// stands, so a loop can stop and continue, here or in another process from
// [GenerationIterator.Cursor]. It is not safe for concurrent use.
type GenerationIterator struct {
	c       *Client
	opts    []Option
	params  ListParams
	cursor  string                 // fetches the current page
	page    []*mediagen.Generation // the current page
	pos     int                    // rows of page already yielded
	next    string                 // the current page's NextCursor
	fetched bool                   // page holds the page cursor fetches
}

// GenerationIterator returns an iterator over the generations p selects,
// starting at p.Cursor; opts apply to every page it reads.
func (c *Client) GenerationIterator(p ListParams, opts ...Option) *GenerationIterator {
	return &GenerationIterator{c: c, opts: opts, params: p, cursor: p.Cursor}
}

// All yields the generations from where the iterator stands; after a break,
// calling All again continues with the next one. An error is yielded once
// and ends the sequence; calling All again retries the page that failed.
func (it *GenerationIterator) All(ctx context.Context) iter.Seq2[*mediagen.Generation, error] {
	return func(yield func(*mediagen.Generation, error) bool) {
		for {
			if it.pos < len(it.page) {
				it.pos++
				if !yield(it.page[it.pos-1], nil) {
					return
				}
				continue
			}
			if it.fetched {
				if it.next == "" {
					return // the last page is used up
				}
				it.cursor, it.page, it.pos, it.fetched = it.next, nil, 0, false
			}
			p := it.params
			p.Cursor = it.cursor
			pg, err := it.c.ListGenerations(ctx, p, it.opts...)
			if err != nil {
				yield(nil, err)
				return
			}
			it.page, it.pos, it.next, it.fetched = pg.Generations, 0, pg.NextCursor, true
		}
	}
}

// Cursor returns the cursor of the page holding the next generation, to
// pass as ListParams.Cursor to a new iterator: that page is read again from
// its first row, so its first [GenerationIterator.Offset] rows come twice.
// "" means the first page, or, once [GenerationIterator.Done], nothing left.
func (it *GenerationIterator) Cursor() string {
	if it.fetched && it.pos == len(it.page) {
		return it.next
	}
	return it.cursor
}

// Offset returns how many rows of the page at [GenerationIterator.Cursor]
// were already yielded.
func (it *GenerationIterator) Offset() int {
	if it.fetched && it.pos < len(it.page) {
		return it.pos
	}
	return 0
}

// Done reports whether every generation was yielded.
func (it *GenerationIterator) Done() bool {
	return it.fetched && it.pos == len(it.page) && it.next == ""
}
