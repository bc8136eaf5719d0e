package poll

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
)

// The benchmarks count requests, not time: renders take their real length
// on the reference server's fake clock, which each wait's sleeps advance.

// BenchmarkGenerationRequests reports the requests one wait costs, by kind.
func BenchmarkGenerationRequests(b *testing.B) {
	kinds := []struct {
		name   string
		create func(*env, testing.TB) *mediagen.Generation
	}{
		{"image", (*env).image},
		{"video", (*env).video},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			e := newEnv(b, clienttest.WithRenderScale(1))
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
	e := newEnv(b, clienttest.WithRenderScale(1))
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

// BenchmarkPairVideoWaits compares, in requests, waiting on 100 logo-reveal
// videos with one Generations call against 100 separate Generation waits,
// each submitted just before its wait so that it costs what it would alone.
// "fresh": the 100 are the newest generations. "buried": 10,000 newer
// videos of the same feature sit above them, so the filtered list shows
// none of them on its first page. Both sides check at the same moments
// (fixedJitter) on the reference server's fake clock, so the counts are
// exact, not timed, and the order of the sides cannot change them. Metrics:
// "batch-requests", "separate-requests", "rounds" (of the batch), and
// "requests-ratio" (batch over separate).
//
//	go test -run '^$' -bench PairVideoWaits -benchtime 1x ./poll/
func BenchmarkPairVideoWaits(b *testing.B) {
	for _, tc := range []struct {
		name  string
		newer int
	}{{"fresh", 0}, {"buried", 10_000}} {
		b.Run(tc.name, func(b *testing.B) {
			var w videoWaits
			for b.Loop() {
				w = measureVideoWaits(b, 100, tc.newer)
			}
			b.ReportMetric(float64(w.batch), "batch-requests")
			b.ReportMetric(float64(w.separate), "separate-requests")
			b.ReportMetric(float64(w.rounds), "rounds")
			b.ReportMetric(float64(w.batch)/float64(w.separate), "requests-ratio")
		})
	}
}

// videoWaits is what waiting on n videos cost each way.
type videoWaits struct {
	batch, rounds int64 // requests and rounds of one Generations call
	separate      int64 // requests of n Generation calls
}

// measureVideoWaits counts the requests of waiting on n logo-reveal videos
// under newer generations of the same feature: with one Generations call,
// and with n separate Generation calls on a server of their own.
func measureVideoWaits(b *testing.B, n, newer int) videoWaits {
	ctx := context.Background()
	batch := newEnv(b, clienttest.WithRenderScale(1))
	batch.srv.SetBalance(10_000_000)
	logo := batch.logo(b)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = batch.videoOf(b, logo).ID
	}
	submitMany(b, batch.c, newer, client.LogoRevealArgs{Image: logo, Prompt: "a newer reveal"})
	batch.count.reset()
	results, err := Generations(ctx, batch.c, ids, withClock(batch.clock), fixedJitter())
	require.NoError(b, err)
	for _, r := range results {
		require.Equal(b, mediagen.GenerationStatusDone, r.Generation.Status)
	}
	w := videoWaits{batch: batch.count.requests(), rounds: int64(len(batch.clock.waits()) + 1)}

	single := newEnv(b, clienttest.WithRenderScale(1))
	logo = single.logo(b)
	single.count.reset()
	for range n {
		g, err := Generation(ctx, single.c, single.videoOf(b, logo).ID, withClock(single.clock), fixedJitter())
		require.NoError(b, err)
		require.Equal(b, mediagen.GenerationStatusDone, g.Status)
	}
	w.separate = single.count.requests()
	return w
}
