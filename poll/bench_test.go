package poll

import (
	"context"
	"testing"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/refserver"
)

// The benchmarks count requests, not time: renders take their real length
// on the reference server's fake clock, which each wait's sleeps advance.

// BenchmarkGenerationRequests reports the requests one wait costs, by kind.
func BenchmarkGenerationRequests(b *testing.B) {
	kinds := []struct {
		name   string
		create func(*env, testing.TB) *client.Generation
	}{
		{"image", (*env).image},
		{"video", (*env).video},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			e := newEnv(b, refserver.WithRenderScale(1))
			var requests, waits int64
			for b.Loop() {
				g := k.create(e, b)
				before := e.count.requests()
				if _, err := Generation(context.Background(), e.c, g.ID, withClock(e.clock)); err != nil {
					b.Fatal(err)
				}
				requests += e.count.requests() - before
				waits++
			}
			b.ReportMetric(float64(requests)/float64(waits), "requests/wait")
		})
	}
}

// BenchmarkGenerationsRequests reports the requests per completed wait when
// 100 image generations are waited on together.
func BenchmarkGenerationsRequests(b *testing.B) {
	const n = 100
	e := newEnv(b, refserver.WithRenderScale(1))
	var requests, waits int64
	for b.Loop() {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = e.image(b).ID
		}
		before := e.count.requests()
		if _, err := Generations(context.Background(), e.c, ids, withClock(e.clock)); err != nil {
			b.Fatal(err)
		}
		requests += e.count.requests() - before
		waits += n
	}
	b.ReportMetric(float64(requests)/float64(waits), "requests/wait")
}
