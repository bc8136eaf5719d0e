package refserver

import (
	"container/heap"
	"iter"
	"slices"
	"time"
)

// The server keeps its rows in two kinds of index, so that the work of a
// request does not grow with what it has stored: a min-heap of the timed
// transitions (settle pops only what is due) and, per project, rows in list
// order (a page is a binary search and a walk).

// listed is a row that has a list order: before reports whether the row is
// listed ahead of o. The order must be total over distinct rows.
type listed[T any] interface {
	comparable
	before(o T) bool
}

// blockSize is the size rowIndex splits its blocks at, halved. Inserting or
// removing moves at most 2*blockSize pointers within a block, and a block
// split or merge moves one pointer per block.
const blockSize = 256

// rowIndex holds rows in list order, in blocks of at most 2*blockSize rows:
// finding a row or a cursor's position is a binary search over the blocks'
// last rows and then within one block. The zero value is empty and ready.
type rowIndex[T listed[T]] struct {
	blocks [][]T
	n      int
}

// Len returns the number of rows.
func (x *rowIndex[T]) Len() int { return x.n }

// search returns the position of the first row for which at is true; at
// must be false for a prefix of the rows and true for the rest. b is
// len(x.blocks) when at is true for no row.
func (x *rowIndex[T]) search(at func(T) bool) (b, i int) {
	b, _ = slices.BinarySearchFunc(x.blocks, true, func(blk []T, _ bool) int {
		if at(blk[len(blk)-1]) {
			return 1
		}
		return -1
	})
	if b == len(x.blocks) {
		return b, 0
	}
	i, _ = slices.BinarySearchFunc(x.blocks[b], true, func(r T, _ bool) int {
		if at(r) {
			return 1
		}
		return -1
	})
	return b, i
}

// Insert adds v at its place in list order.
func (x *rowIndex[T]) Insert(v T) {
	x.n++
	if len(x.blocks) == 0 {
		x.blocks = append(x.blocks, append(make([]T, 0, 2*blockSize), v))
		return
	}
	b, i := x.search(func(r T) bool { return !r.before(v) })
	if b == len(x.blocks) {
		// After every row: the end of the last block.
		b = len(x.blocks) - 1
		i = len(x.blocks[b])
	}
	x.blocks[b] = slices.Insert(x.blocks[b], i, v)
	if blk := x.blocks[b]; len(blk) >= 2*blockSize {
		tail := append(make([]T, 0, 2*blockSize), blk[blockSize:]...)
		clear(blk[blockSize:])
		x.blocks[b] = blk[:blockSize]
		x.blocks = slices.Insert(x.blocks, b+1, tail)
	}
}

// Remove deletes v and reports whether it was there.
func (x *rowIndex[T]) Remove(v T) bool {
	b, i := x.search(func(r T) bool { return !r.before(v) })
	if b == len(x.blocks) || x.blocks[b][i] != v {
		return false
	}
	x.n--
	blk := slices.Delete(x.blocks[b], i, i+1)
	x.blocks[b] = blk
	switch {
	case len(blk) == 0:
		x.blocks = slices.Delete(x.blocks, b, b+1)
	case b+1 < len(x.blocks) && len(blk)+len(x.blocks[b+1]) <= blockSize:
		// Merging keeps the blocks few after scattered deletes.
		x.blocks[b] = append(blk, x.blocks[b+1]...)
		x.blocks = slices.Delete(x.blocks, b+1, b+2)
	}
	if len(x.blocks) == 0 {
		x.blocks = nil // release the last block's array
	}
	return true
}

// Page returns up to limit rows from the first one for which from is true
// (from the first row when from is nil), and whether rows follow them.
// from must be false for a prefix of the rows and true for the rest.
func (x *rowIndex[T]) Page(from func(T) bool, limit int) (rows []T, more bool) {
	b, i := 0, 0
	if from != nil {
		b, i = x.search(from)
	}
	rows = make([]T, 0, min(limit, x.n))
	for ; b < len(x.blocks); b, i = b+1, 0 {
		for _, r := range x.blocks[b][i:] {
			if len(rows) == limit {
				return rows, true
			}
			rows = append(rows, r)
		}
	}
	return rows, false
}

// All yields every row in list order. The index must not change while it
// runs.
func (x *rowIndex[T]) All() iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, blk := range x.blocks {
			for _, r := range blk {
				if !yield(r) {
					return
				}
			}
		}
	}
}

// timer is a row's place in the server's timer heap; generations, clones
// and files embed it.
type timer struct {
	at  time.Time // when the next transition of the row is due
	seq uint64    // order of scheduling, so rows due together settle in a stable order
	pos int       // 1 + index in the heap; 0 when not scheduled
}

// timing returns the timer, which makes every row that embeds one a timed.
func (t *timer) timing() *timer { return t }

// timed is a row with a timer.
type timed interface{ timing() *timer }

// timerHeap is a min-heap of rows by due time, for container/heap.
type timerHeap []timed

func (h timerHeap) Len() int { return len(h) }

func (h timerHeap) Less(i, j int) bool {
	a, b := h[i].timing(), h[j].timing()
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.seq < b.seq
}

func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].timing().pos = i + 1
	h[j].timing().pos = j + 1
}

// Push is for container/heap; call [timers.schedule].
func (h *timerHeap) Push(x any) {
	t := x.(timed)
	*h = append(*h, t)
	t.timing().pos = len(*h)
}

// Pop is for container/heap; call [timers.next].
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil // let the row go once it is out
	*h = old[:len(old)-1]
	t.timing().pos = 0
	return t
}

// timers schedules rows' transitions.
type timers struct {
	h   timerHeap
	seq uint64
}

// schedule makes r due at at, moving it when it is already scheduled.
func (ts *timers) schedule(r timed, at time.Time) {
	t := r.timing()
	t.at = at
	ts.seq++
	t.seq = ts.seq
	if t.pos > 0 {
		heap.Fix(&ts.h, t.pos-1)
		return
	}
	heap.Push(&ts.h, r)
}

// cancel takes r out of the heap, if it is in.
func (ts *timers) cancel(r timed) {
	if t := r.timing(); t.pos > 0 {
		heap.Remove(&ts.h, t.pos-1)
	}
}

// next removes and returns the earliest row due at or before now, or nil.
func (ts *timers) next(now time.Time) timed {
	if len(ts.h) == 0 || ts.h[0].timing().at.After(now) {
		return nil
	}
	return heap.Pop(&ts.h).(timed)
}

// Len returns the number of scheduled rows.
func (ts *timers) Len() int { return len(ts.h) }
