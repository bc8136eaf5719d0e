package batch_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/batch"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
)

// A bad option, the run's own or one it carries to its requests or its
// waits, fails the run before any request; so do the client options that
// belong to one call, where a run makes many: an idempotency key (each item
// has its own) and WithResponseInto. Every problem is named.
func TestBadOptionsRefusedBeforeAnyRequest(t *testing.T) {
	var resp *http.Response
	cases := map[string]struct {
		opts []batch.Option
		want []string
	}{
		"invalid client option":    {[]batch.Option{batch.WithClientOptions(client.WithTimeout(-1))}, []string{"batch.WithClientOptions: ", "WithTimeout"}},
		"client option for New":    {[]batch.Option{batch.WithClientOptions(client.WithBaseURL("https://elsewhere.example"))}, []string{"batch.WithClientOptions: ", "WithBaseURL"}},
		"idempotency key":          {[]batch.Option{batch.WithClientOptions(client.WithTimeout(time.Minute)), batch.WithClientOptions(client.WithIdempotencyKey("order-7"))}, []string{"batch.WithClientOptions: ", "WithIdempotencyKey applies to one call"}},
		"response into":            {[]batch.Option{batch.WithClientOptions(client.WithResponseInto(&resp))}, []string{"batch.WithClientOptions: ", "WithResponseInto applies to one call"}},
		"poll's OnVoiceUpdate":     {[]batch.Option{batch.WithPollOptions(poll.OnVoiceUpdate(func(*mediagen.Voice) {}))}, []string{"batch.WithPollOptions: ", "OnVoiceUpdate"}},
		"max pause":                {[]batch.Option{batch.WithMaxPause(0)}, []string{"batch.WithMaxPause(0s)", "positive"}},
		"invalid poll option":      {[]batch.Option{batch.WithPollOptions(poll.WithInterval(0))}, []string{"batch.WithPollOptions: ", "poll.WithInterval"}},
		"poll's bad client option": {[]batch.Option{batch.WithPollOptions(poll.WithClientOptions(client.WithTimeout(-1)))}, []string{"batch.WithPollOptions: ", "poll.WithClientOptions", "WithTimeout"}},
		"all at once": {
			[]batch.Option{nil, batch.WithConcurrency(0), batch.WithClientOptions(client.WithMaxRetries(-1), client.WithIdempotencyKey("k")),
				batch.WithPollOptions(poll.WithMaxWait(0), poll.OnUpdate(func(*mediagen.Generation) {}))},
			[]string{"batch.WithConcurrency", "WithMaxRetries", "WithIdempotencyKey applies to one call", "poll.WithMaxWait"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := clienttest.NewServer(t)
			var sent atomic.Int32
			count := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
				sent.Add(1)
				return next(req)
			}
			res, err := batch.Run(t.Context(), srv.Client(client.WithMiddleware(count)), images("x", 2),
				append([]batch.Option{batch.WithBudget(1), batch.WithSaveTo(t.TempDir())}, tc.opts...)...)
			require.Error(t, err)
			for _, want := range tc.want {
				assert.ErrorContains(t, err, want)
			}
			assert.Empty(t, res.Items)
			assert.Zero(t, sent.Load(), "requests sent")
			assert.Equal(t, clienttest.Balance, srv.Balance())
		})
	}
}

// Client options carried by WithClientOptions reach every request of the
// run: the price list, the creates, the waits and the saves; a carried
// timeout bounds each API request.
func TestClientOptionsReachEveryRequest(t *testing.T) {
	srv := clienttest.NewServer(t)
	var all, carried, bounded atomic.Int64
	var mu sync.Mutex
	kinds := map[string]int{}
	outer := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		all.Add(1)
		return next(req)
	}
	const timeout = 42 * time.Minute // far from client.DefaultTimeout
	inner := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		carried.Add(1)
		mu.Lock()
		kinds[kindOf(req)]++
		mu.Unlock()
		if !strings.HasPrefix(req.URL.Path, "/v3/") {
			return next(req) // storage: the transfer timeout applies
		}
		if dl, ok := req.Context().Deadline(); ok && time.Until(dl) > timeout-time.Minute && time.Until(dl) <= timeout {
			bounded.Add(1)
		}
		return next(req)
	}
	res, err := batch.Run(t.Context(), srv.Client(client.WithMiddleware(outer)), images("carried", 5),
		batch.WithBudget(1), batch.WithSaveTo(t.TempDir()),
		batch.WithClientOptions(client.WithMiddleware(inner)), batch.WithClientOptions(client.WithTimeout(timeout)))
	require.NoError(t, err)
	assert.Equal(t, 5, res.Done)
	assert.Equal(t, all.Load(), carried.Load(), "every request went through the carried middleware")
	assert.Equal(t, carried.Load()-int64(kinds["storage"]), bounded.Load(), "every API request had the carried timeout")
	for _, kind := range []string{"pricing", "create", "wait", "storage"} {
		assert.Positive(t, kinds[kind], kind)
	}
}

// Poll options carried by WithPollOptions reach the run's waits, and only
// them.
func TestPollOptionsReachTheWaits(t *testing.T) {
	srv := clienttest.NewServer(t)
	var mu sync.Mutex
	tagged := map[string]int{}
	watch := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if req.Header.Get("X-Wait") == "batch" {
			mu.Lock()
			tagged[kindOf(req)]++
			mu.Unlock()
		}
		return next(req)
	}
	res, err := batch.Run(t.Context(), srv.Client(client.WithMiddleware(watch)), images("polled", 5),
		batch.WithPollOptions(poll.WithInterval(time.Second)),
		batch.WithPollOptions(poll.WithClientOptions(client.WithHeader("X-Wait", "batch"))))
	require.NoError(t, err)
	assert.Equal(t, 5, res.Done)
	assert.Positive(t, tagged["wait"])
	assert.Equal(t, map[string]int{"wait": tagged["wait"]}, tagged, "the waits' requests only")

	// A maximum wait ends the waits, each item with an error matching
	// poll.ErrMaxWait, and the run with it.
	res, err = batch.Run(t.Context(), srv.Client(), images("bounded", 3), batch.WithPollOptions(poll.WithMaxWait(time.Nanosecond)))
	require.NoError(t, err)
	assert.Equal(t, 3, res.Failed)
	for _, it := range res.Items {
		assert.True(t, errors.Is(it.Err, poll.ErrMaxWait), it.Err)
	}
}

// kindOf names what a request of a run is for.
func kindOf(req *http.Request) string {
	switch {
	case !strings.HasPrefix(req.URL.Path, "/v3/"):
		return "storage"
	case req.URL.Path == "/v3/pricing":
		return "pricing"
	case isCreate(req):
		return "create"
	case req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v3/generations"):
		return "wait"
	}
	return req.Method + " " + req.URL.Path
}

// A poll.OnUpdate carried to the run's waits sees each generation the run
// waits on, beside the run's own bookkeeping, which it does not replace.
func TestPollOnUpdateSeesTheRunsGenerations(t *testing.T) {
	srv := clienttest.NewServer(t)
	var mu sync.Mutex
	seen := map[string]mediagen.GenerationStatus{}
	onUpdate := poll.OnUpdate(func(g *mediagen.Generation) {
		mu.Lock()
		defer mu.Unlock()
		seen[g.ID] = g.Status
	})
	res, err := batch.Run(t.Context(), srv.Client(), images("heron", 3), batch.WithPollOptions(onUpdate))
	require.NoError(t, err)
	require.Len(t, res.Items, 3)
	for _, it := range res.Items {
		require.NoError(t, it.Err)
		assert.Equal(t, mediagen.GenerationStatusDone, seen[it.Generation.ID], "the caller's OnUpdate saw it done")
	}
}

// A save carried to the run's waits (poll.WithSaveFunc) that fails ends its
// item with the save's error, not done: the run's OnUpdate had counted it
// done before the wait saved.
func TestPollSaveFailureEndsTheItem(t *testing.T) {
	srv := clienttest.NewServer(t)
	open := func(_ context.Context, g *mediagen.Generation, _, _ string) (io.WriteCloser, error) {
		if g.Params["prompt"] == "bucket-001" {
			return nil, errors.New("bucket gone")
		}
		return nopCloser{io.Discard}, nil
	}
	var last batch.Progress
	res, err := batch.Run(t.Context(), srv.Client(), images("bucket", 3), batch.WithPollOptions(poll.WithSaveFunc(open)),
		batch.OnProgress(func(p batch.Progress) { last = p }))
	require.NoError(t, err)
	var saveErr *poll.SaveError
	require.ErrorAs(t, res.Items[1].Err, &saveErr)
	assert.Contains(t, res.Items[1].Err.Error(), "bucket gone")
	assert.Equal(t, mediagen.GenerationStatusDone, res.Items[1].Generation.Status)
	assert.NoError(t, res.Items[0].Err)
	assert.NoError(t, res.Items[2].Err)
	assert.Equal(t, []int{2, 1, 0}, []int{res.Done, res.Failed, res.Skipped})
	assert.Equal(t, []int{2, 1}, []int{last.Done, last.Failed}, "the last progress report")
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// A budget too large to count in the run's units (math.MaxFloat64, for no
// limit) is no limit, not a negative budget that refuses every run.
func TestHugeBudgetIsNoLimit(t *testing.T) {
	srv := clienttest.NewServer(t)
	items := images("huge", 3)
	for _, usd := range []float64{math.MaxFloat64, 1e15} {
		res, err := batch.Run(t.Context(), srv.Client(), items, batch.WithBudget(usd))
		require.NoError(t, err, "budget %g", usd)
		assert.Equal(t, len(items), res.Done)
	}
}
