// Package benchpair measures a pair of benchmark sides, the SDK and the
// floor it is compared with, so that order cannot favour either: the sides
// run in alternating blocks inside one benchmark, each block timed and its
// allocations counted on its own, and the block that goes first changes
// every time. On a shared machine a burst of other work then lands on both
// sides alike. A burst that stalls one block alone would still weigh on a
// sum, so the time ratio is the median of the ratios of the blocks that ran
// next to each other.
package benchpair

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

// Side is one side of a pair: Name is the prefix of its metrics, Run does
// one operation and fails b on error.
type Side struct {
	Name string
	Run  func(b *testing.B)
}

// Result is what Run measured of each side: totals over every operation,
// and the median time ratio.
type Result struct {
	Ops       int64
	Time      [2]time.Duration
	Allocs    [2]uint64 // heap objects allocated, by anything in the process
	Bytes     [2]uint64 // heap bytes allocated, likewise
	TimeRatio float64   // median over pairs of blocks of sides[0]'s time over sides[1]'s
}

// Block is how many operations of one side run back to back between two
// readings of the allocation counters.
const Block = 8

// Run runs sides[0] and sides[1] b.N times each, in alternating blocks of
// [Block] operations, after 4 warm-up operations of both, and reports per
// operation the time, allocations and bytes of each side and their ratios
// (sides[0] over sides[1]): "<name>-ns/op" (the mean), "<name>-allocs/op",
// "<name>-B/op", "time-ratio" (the median of the blocks' ratios) and
// "allocs-ratio". The benchmark's own ns/op is that of a pair plus the
// counters' readings; it is not one of the figures.
func Run(b *testing.B, sides [2]Side) Result {
	b.Helper()
	return RunBlocks(b, Block, 4, sides)
}

// RunBlocks is [Run] with blocks of block operations after warmup warm-up
// operations of each side: for operations long enough that one per block
// reads the counters rarely enough, such as large uploads.
func RunBlocks(b *testing.B, block, warmup int, sides [2]Side) Result {
	b.Helper()
	for range warmup {
		sides[0].Run(b)
		sides[1].Run(b)
	}
	var (
		res           Result
		before, after runtime.MemStats
		ratios        []float64
	)
	b.ResetTimer()
	for i := 0; res.Ops < int64(b.N); i++ {
		n := min(int64(block), int64(b.N)-res.Ops)
		var took [2]time.Duration
		for k := range 2 {
			s := (i + k) % 2
			runtime.ReadMemStats(&before)
			start := time.Now()
			for range n {
				sides[s].Run(b)
			}
			took[s] = time.Since(start)
			runtime.ReadMemStats(&after)
			res.Time[s] += took[s]
			res.Allocs[s] += after.Mallocs - before.Mallocs
			res.Bytes[s] += after.TotalAlloc - before.TotalAlloc
		}
		ratios = append(ratios, ratio(float64(took[0]), float64(took[1])))
		res.Ops += n
	}
	b.StopTimer()
	ops := float64(res.Ops)
	for i, s := range sides {
		b.ReportMetric(float64(res.Time[i].Nanoseconds())/ops, s.Name+"-ns/op")
		b.ReportMetric(float64(res.Allocs[i])/ops, s.Name+"-allocs/op")
		b.ReportMetric(float64(res.Bytes[i])/ops, s.Name+"-B/op")
	}
	slices.Sort(ratios)
	res.TimeRatio = ratios[len(ratios)/2]
	b.ReportMetric(res.TimeRatio, "time-ratio")
	b.ReportMetric(ratio(float64(res.Allocs[0]), float64(res.Allocs[1])), "allocs-ratio")
	return res
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
