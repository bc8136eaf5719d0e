package refserver

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mediagen/mediagen-go/internal/api"
)

// Benchmarks of the server at scale, in process (no sockets): a GET and a
// 100-row page at 1,000, 10,000 and 100,000 stored generations, and the heap
// a finished generation holds. The three sizes live side by side and each
// iteration serves one request from each, starting with a different size in
// turn, so neither warm-up nor drift favours a size:
//
//	go test ./internal/refserver -run '^$' -bench 'Stored' -count 6
//	go test ./internal/refserver -run '^$' -bench 'HeapPerGeneration' -benchtime 1x -count 3
//
// cmd/refload measures the same over loopback, create+get pairs included.

var benchSizes = []int{1_000, 10_000, 100_000}

const benchKey = "bench-key"

// benchPrompt is a prompt of a typical length.
const benchPrompt = "a lighthouse on a cliff at dusk, warm light, long exposure, gulls"

// benchState is a server holding finished generations, and what requests
// against it need.
type benchState struct {
	srv     *Server
	ids     []string
	cursors []string // "" and every nextCursor of a walk with limit 100
}

// benchStates are built once per process: 100,000 rows take a second or
// two, and a benchmark function is called several times.
var benchStates = map[int]*benchState{}

// fill creates n image generations for benchKey, one millisecond apart, and
// lets them finish. It returns their ids.
func fill(tb testing.TB, srv *Server, clock *FakeClock, n int) []string {
	srv.mu.Lock()
	ctx := contextWithProject(srv.projects[benchKey])
	srv.mu.Unlock()
	ids := make([]string, n)
	for i := range ids {
		resp, err := srv.CreateGeneration(ctx, createRequest("image/generation", map[string]any{"prompt": benchPrompt, "aspectRatio": "16:9"}))
		if err != nil {
			tb.Fatal(err)
		}
		ok, isOK := resp.(api.CreateGeneration200JSONResponse)
		if !isOK {
			tb.Fatalf("create: %#v", resp)
		}
		ids[i] = ok.Generation.ID
		clock.Advance(time.Millisecond)
	}
	clock.Advance(5 * time.Minute)
	srv.Settle()
	return ids
}

func benchServer(b *testing.B, n int) *benchState {
	b.Helper()
	if st, ok := benchStates[n]; ok {
		return st
	}
	clock := NewFakeClock(testStart)
	srv := New(WithClock(clock), WithProject(benchKey, 1e9))
	st := &benchState{srv: srv, ids: fill(b, srv, clock, n), cursors: []string{""}}
	for {
		var page struct{ NextCursor *string }
		rec := serve(srv, "/v3/generations?limit=100&cursor="+url.QueryEscape(st.cursors[len(st.cursors)-1]))
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || rec.Code != http.StatusOK {
			b.Fatalf("walk: %d %s", rec.Code, rec.Body)
		}
		if page.NextCursor == nil {
			break
		}
		st.cursors = append(st.cursors, *page.NextCursor)
	}
	benchStates[n] = st
	return st
}

// serve answers one GET in process.
func serve(srv *Server, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "http://refserver.test"+path, nil)
	req.Header.Set("Authorization", benchKey)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

// benchInterleaved times one request per size per iteration, the first
// size rotating, and reports the mean time at each size and the ratio of
// the largest to the smallest.
func benchInterleaved(b *testing.B, unit string, request func(st *benchState, rng *rand.Rand) string, check func(*httptest.ResponseRecorder) bool) {
	states := make([]*benchState, len(benchSizes))
	for i, n := range benchSizes {
		states[i] = benchServer(b, n)
	}
	runtime.GC()
	rng := rand.New(rand.NewPCG(1, 2))
	spent := make([]time.Duration, len(states))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		for k := range states {
			j := (i + k) % len(states)
			path := request(states[j], rng)
			t0 := time.Now()
			rec := serve(states[j].srv, path)
			spent[j] += time.Since(t0)
			if !check(rec) {
				b.Fatalf("%s: %d %.200s", path, rec.Code, rec.Body)
			}
		}
		i++
	}
	for j, n := range benchSizes {
		b.ReportMetric(float64(spent[j].Nanoseconds())/float64(b.N), fmt.Sprintf("ns/%s@%dk", unit, n/1000))
	}
	b.ReportMetric(float64(spent[len(spent)-1])/float64(spent[0]), fmt.Sprintf("x@%dk/%dk", benchSizes[len(benchSizes)-1]/1000, benchSizes[0]/1000))
}

// BenchmarkStoredGet times GET /v3/generations/{id} of a random finished
// generation; ns/op is for one GET at each size.
func BenchmarkStoredGet(b *testing.B) {
	benchInterleaved(b, "get",
		func(st *benchState, rng *rand.Rand) string {
			return "/v3/generations/" + st.ids[rng.IntN(len(st.ids))]
		},
		func(rec *httptest.ResponseRecorder) bool { return rec.Code == http.StatusOK })
}

// BenchmarkStoredPage times a 100-row page of GET /v3/generations from a
// random cursor; ns/op is for one page at each size.
func BenchmarkStoredPage(b *testing.B) {
	benchInterleaved(b, "page",
		func(st *benchState, rng *rand.Rand) string {
			// Any full page: the last one may be short.
			c := st.cursors[rng.IntN(max(1, len(st.cursors)-1))]
			return "/v3/generations?limit=100&cursor=" + url.QueryEscape(c)
		},
		func(rec *httptest.ResponseRecorder) bool {
			return rec.Code == http.StatusOK && strings.Count(rec.Body.String(), `"id":`) == 100
		})
}

// BenchmarkHeapPerGeneration reports the live heap a finished generation
// holds, indexes included, as heapB/gen. Each iteration builds a server
// from empty; run it with -benchtime 1x.
func BenchmarkHeapPerGeneration(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("stored=%d", n), func(b *testing.B) {
			var per float64
			for range b.N {
				per = heapPerGeneration(b, n)
			}
			b.ReportMetric(per, "heapB/gen")
		})
	}
}

func heapPerGeneration(b *testing.B, n int) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	clock := NewFakeClock(testStart)
	srv := New(WithClock(clock), WithProject(benchKey, 1e9))
	defer srv.Close()
	ids := fill(b, srv, clock, n)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(ids) // the caller's view of what it created, not counted below
	held := float64(after.HeapAlloc) - float64(before.HeapAlloc) - float64(n*(16+len(ids[0])))
	runtime.KeepAlive(srv)
	return held / float64(n)
}
