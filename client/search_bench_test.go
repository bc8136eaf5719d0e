package client_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/benchpair"
)

// takeovers is how many keys a restarted worker takes over at once in
// BenchmarkPairTakeoverSearch.
const takeovers = 40

// BenchmarkPairTakeoverSearch measures a restart after a crash under load:
// 40 keys whose holder died are taken over at once, and each dead
// holder's send lies below rows newer generations of its feature (1k, 10k
// and 100k). The SDK side is the 40 keyed creates of a fresh client: each
// searches, finds its send and sends nothing. The floor is one walk of the
// same rows with net/http and encoding/json, 100 a page: the least that
// any search could read. Searches that did not share their listings would
// cost 40 walks.
func BenchmarkPairTakeoverSearch(b *testing.B) {
	for _, rows := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			benchTakeovers(b, rows)
		})
	}
}

func benchTakeovers(b *testing.B, rows int) {
	ctx := context.Background()
	srv := clienttest.NewServer(b, clienttest.WithBalance(1e9))
	scene := newCrashScene(b, srv, takeovers, 0, rows)
	hc := &http.Client{Transport: loopback(b)}
	var lists, posts atomic.Int64
	count := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if req.Method == http.MethodPost {
			posts.Add(1)
		} else {
			lists.Add(1)
		}
		return next(req)
	}

	sdk := func(b *testing.B) {
		c := srv.Client(client.WithHTTPClient(hc), client.WithJournal(scene.journal(b)), client.WithMiddleware(count))
		var g errgroup.Group
		for i := range takeovers {
			g.Go(func() error {
				got, err := c.CreateGeneration(ctx, scene.args(i), client.WithIdempotencyKey(scene.key(i)))
				if err == nil && got.ID != scene.ids[i] {
					err = fmt.Errorf("key %s: got %s, want the dead holder's %s", scene.key(i), got.ID, scene.ids[i])
				}
				return err
			})
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	walk := func(b *testing.B) {
		url := srv.URL() + "/v3/generations?feature=image%2Fgeneration&limit=100"
		cursor, seen := "", 0
		for {
			var page struct {
				Generations []mediagen.Generation
				NextCursor  *string
			}
			u := url
			if cursor != "" {
				u += "&cursor=" + cursor
			}
			rawDo(b, hc, http.MethodGet, u, srv.APIKey(), nil, http.StatusOK, &page)
			seen += len(page.Generations)
			if page.NextCursor == nil || *page.NextCursor == "" {
				break
			}
			cursor = *page.NextCursor
		}
		if seen < rows+takeovers {
			b.Fatalf("walked %d rows, want %d", seen, rows+takeovers)
		}
	}
	res := benchpair.RunBlocks(b, 1, 1, [2]benchpair.Side{{Name: "sdk", Run: sdk}, {Name: "raw", Run: walk}})
	if posts.Load() != 0 {
		b.Fatalf("%d creates sent; every key's send was there to find", posts.Load())
	}
	pages := float64(rows+takeovers+99) / 100
	// Per SDK operation (40 searches), in walks of the rows.
	b.ReportMetric(float64(lists.Load())/float64(res.Ops+1)/pages, "walks/op")
}
