package batch_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
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
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/poll"
)

// imagePrice is the reference server's price of an image generation.
const imagePrice = 0.04

func TestRunAllDone(t *testing.T) {
	srv := clienttest.NewServer(t)
	c := srv.Client()
	items := images("all", 25)
	start := srv.Balance()

	res, err := batch.Run(t.Context(), c, items)
	require.NoError(t, err)
	require.Len(t, res.Items, len(items))
	for i, it := range res.Items {
		require.NoError(t, it.Err, it.Key)
		assert.Equal(t, items[i].Key, it.Key, "item order")
		assert.Equal(t, mediagen.GenerationStatusDone, it.Generation.Status)
		assert.Equal(t, items[i].Key, it.Generation.Params["prompt"])
	}
	assert.Equal(t, batch.Result{Items: res.Items, Spent: 25 * imagePrice, Submitted: 25, Done: 25}, res)
	assert.InDelta(t, start-res.Spent, srv.Balance(), 1e-9)
	requireOnceEach(t, c, items)
}

func TestBudgetRefusedSendsNothing(t *testing.T) {
	srv := clienttest.NewServer(t)
	var cr creates
	c := srv.Client(client.WithMiddleware(cr.middleware))
	items := images("over", 10) // 0.40 USD

	res, err := batch.Run(t.Context(), c, items, batch.WithBudget(0.39))
	require.ErrorIs(t, err, batch.ErrOverBudget)
	assert.Contains(t, err.Error(), "0.4 USD")
	assert.Contains(t, err.Error(), "0.39 USD")
	assert.Empty(t, res.Items)
	total, _ := cr.counts()
	assert.Zero(t, total, "creates sent")
	assert.Equal(t, clienttest.Balance, srv.Balance())
}

func TestFitBudgetRunsTheFirstItemsThatFit(t *testing.T) {
	srv := clienttest.NewServer(t)
	c := srv.Client()
	items := images("fit", 10)
	// A thumbnail with fine details costs more than an image: 0.05 × 1.5.
	items[2].Args = client.YoutubeThumbnailArgs{Prompt: items[2].Key, FineDetails: true}

	res, err := batch.Run(t.Context(), c, items, batch.WithBudget(0.2), batch.WithFitBudget())
	require.NoError(t, err)
	// 0.04 + 0.04 + 0.075 + 0.04 = 0.195; the fifth would make 0.235.
	assert.Equal(t, 4, res.Done)
	assert.Equal(t, 6, res.Skipped)
	assert.InDelta(t, 0.195, res.Spent, 1e-9)
	for i, it := range res.Items {
		if i < 4 {
			assert.NoError(t, it.Err)
			continue
		}
		assert.ErrorIs(t, it.Err, batch.ErrOverBudget, it.Key)
		assert.Nil(t, it.Generation)
	}
	requireOnceEach(t, c, items[:4])
	assert.InDelta(t, clienttest.Balance-0.195, srv.Balance(), 1e-9)
}

func TestRunningTotalNeverExceedsBudget(t *testing.T) {
	// Every third render fails and is refunded; the balance is read at
	// every create, in flight or not.
	srv := clienttest.NewServer(t, clienttest.WithFaults(clienttest.Faults{Seed: 3, RenderError: 0.3}))
	const budget = 1.0
	start := srv.Balance()
	var mu sync.Mutex
	var worst float64
	watch := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		if isCreate(req) {
			mu.Lock()
			worst = max(worst, start-srv.Balance())
			mu.Unlock()
		}
		return resp, err
	}
	c := srv.Client(client.WithMiddleware(watch))
	items := images("total", 40) // 1.60 USD: the first 25 fit
	var spentMax float64
	res, err := batch.Run(t.Context(), c, items, batch.WithBudget(budget), batch.WithFitBudget(),
		batch.WithConcurrency(16), batch.OnProgress(func(p batch.Progress) { spentMax = max(spentMax, p.Spent) }))
	require.NoError(t, err)
	assert.Equal(t, 25, res.Done+res.Failed)
	assert.Equal(t, 15, res.Skipped)
	assert.LessOrEqual(t, worst, budget+1e-9)
	assert.LessOrEqual(t, spentMax, budget+1e-9)
	assert.Positive(t, res.Failed, "the seed fails some renders")
	for _, it := range res.Items[:25] {
		if it.Err != nil {
			var failed *poll.FailedError
			assert.ErrorAs(t, it.Err, &failed)
		}
	}
	assert.InDelta(t, start-srv.Balance(), res.Spent, 1e-9, "refunds credited")
}

func TestRateLimitedEveryItemDoneOnce(t *testing.T) {
	// 10% of every request answers 429 with a Retry-After of 1 s, which
	// the test client (retry waits of at most 10 ms) does not wait out:
	// every such create reaches the run.
	srv := clienttest.NewServer(t, clienttest.WithFaults(clienttest.Faults{Seed: 11, HTTPStatus: 0.1, Statuses: []int{429}}))
	var cr creates
	c := srv.Client(client.WithMiddleware(cr.middleware), client.WithJournalHold(time.Second))
	items := images("limited", 60)
	start := srv.Balance()
	var lowest atomic.Int64
	lowest.Store(100)
	res, err := batch.Run(t.Context(), c, items, batch.WithConcurrency(8),
		batch.OnProgress(func(p batch.Progress) {
			if int64(p.Concurrency) < lowest.Load() {
				lowest.Store(int64(p.Concurrency))
			}
		}))
	require.NoError(t, err)
	assert.Equal(t, 60, res.Done)
	for _, it := range res.Items {
		require.NoError(t, it.Err)
	}
	require.Positive(t, cr.answers[429], "429s reached the run")
	assert.Less(t, lowest.Load(), int64(4), "the window halved below its start")

	require.NoError(t, srv.SetFaults(clienttest.Faults{}))
	requireOnceEach(t, c, items)
	var sum float64
	for _, it := range res.Items {
		sum += it.Generation.BalanceUsed
	}
	assert.InDelta(t, start-sum, srv.Balance(), 1e-9, "charged once per item")
	assert.InDelta(t, sum, res.Spent, 1e-9)
}

func TestCancelledRunResumesWithoutResubmitting(t *testing.T) {
	srv := clienttest.NewServer(t)
	j := journal.NewMemory() // shared by both runs, as a SQL journal is by two processes
	items := images("resume", 30)
	start := srv.Balance()

	var first creates
	c1 := srv.Client(client.WithJournal(j), client.WithJournalHold(time.Second), client.WithMiddleware(first.middleware))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res1, err := batch.Run(ctx, c1, items, batch.WithConcurrency(4),
		batch.OnProgress(func(p batch.Progress) {
			if p.Submitted >= 12 {
				cancel()
			}
		}))
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "same journal")
	require.Len(t, res1.Items, len(items))
	assert.GreaterOrEqual(t, res1.Submitted, 12)
	assert.Less(t, res1.Submitted, len(items))
	assert.Equal(t, len(items), res1.Done+res1.Failed+res1.Skipped)
	before := perPrompt(t, srv.Client())

	var second creates
	c2 := srv.Client(client.WithJournal(j), client.WithJournalHold(time.Second), client.WithMiddleware(second.middleware))
	res2, err := batch.Run(t.Context(), c2, items, batch.WithConcurrency(4))
	require.NoError(t, err)
	assert.Equal(t, len(items), res2.Done)
	assert.Equal(t, len(items), res2.Submitted)

	sent, _ := second.counts()
	firstSent, _ := first.counts()
	t.Logf("first run: %d creates sent, %d generations, %d submitted; second run: %d creates sent", firstSent, len(before), res1.Submitted, sent)
	assert.LessOrEqual(t, sent, len(items)-len(before), "the second run sends only what has no generation")
	requireOnceEach(t, srv.Client(), items)
	var sum float64
	for _, it := range res2.Items {
		sum += it.Generation.BalanceUsed
	}
	assert.InDelta(t, start-sum, srv.Balance(), 1e-9)
	assert.InDelta(t, sum, res2.Spent, 1e-9, "the second run's Spent counts the first run's generations")
	for k := range before {
		assert.Contains(t, k, "resume-")
	}
}

func TestConcurrencyNeverAboveCeiling(t *testing.T) {
	for _, ceiling := range []int{1, 3, 6} {
		t.Run(fmt.Sprint(ceiling), func(t *testing.T) {
			// Slow creates, so that many would overlap if allowed.
			srv := clienttest.NewServer(t, clienttest.WithFaults(clienttest.Faults{Latency: 5 * time.Millisecond, Methods: []string{"POST"}}))
			var cr creates
			c := srv.Client(client.WithMiddleware(cr.middleware))
			var highest atomic.Int64
			res, err := batch.Run(t.Context(), c, images("ceiling", 60), batch.WithConcurrency(ceiling),
				batch.OnProgress(func(p batch.Progress) {
					if int64(p.Concurrency) > highest.Load() {
						highest.Store(int64(p.Concurrency))
					}
				}))
			require.NoError(t, err)
			assert.Equal(t, 60, res.Done)
			total, most := cr.counts()
			assert.Equal(t, 60, total)
			assert.LessOrEqual(t, most, ceiling, "concurrent creates")
			assert.Equal(t, int64(ceiling), highest.Load(), "the window grows to the ceiling")
			if ceiling > 1 {
				assert.Greater(t, most, 1, "creates overlapped")
			}
		})
	}
}

func TestProgressSerializedAndMonotonic(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.WithFaults(clienttest.Faults{Seed: 5, RenderError: 0.2}))
	c := srv.Client()
	var (
		calls   []batch.Progress
		inside  atomic.Int32
		overlap bool
	)
	res, err := batch.Run(t.Context(), c, images("progress", 40), batch.WithConcurrency(8),
		batch.OnProgress(func(p batch.Progress) {
			if inside.Add(1) > 1 {
				overlap = true
			}
			time.Sleep(100 * time.Microsecond) // widen any overlap
			calls = append(calls, p)
			inside.Add(-1)
		}))
	require.NoError(t, err)
	assert.False(t, overlap, "OnProgress calls overlapped")
	require.NotEmpty(t, calls)
	for i := 1; i < len(calls); i++ {
		prev, p := calls[i-1], calls[i]
		assert.GreaterOrEqual(t, p.Submitted, prev.Submitted)
		assert.GreaterOrEqual(t, p.Done, prev.Done)
		assert.GreaterOrEqual(t, p.Failed, prev.Failed)
		assert.True(t, p.Concurrency >= 1 && p.Concurrency <= 8, p.Concurrency)
	}
	last := calls[len(calls)-1]
	assert.Equal(t, batch.Progress{Submitted: res.Submitted, Done: res.Done, Failed: res.Failed, Spent: res.Spent, Concurrency: last.Concurrency}, last)
	assert.Positive(t, res.Failed)
	assert.Equal(t, 40, res.Submitted)
}

func TestBadInputRefusedBeforeSending(t *testing.T) {
	var nilArgs *client.ImageGenerationArgs
	ok := client.ImageGenerationArgs{Prompt: "ok"}
	cases := map[string]struct {
		items []batch.Item
		opts  []batch.Option
		want  string
	}{
		"missing key":     {items: []batch.Item{{Key: "a", Args: ok}, {Args: ok}}, want: "item 1: mediagen: invalid argument: no key"},
		"duplicate key":   {items: []batch.Item{{Key: "a", Args: ok}, {Key: "b", Args: ok}, {Key: "a", Args: ok}}, want: `item 2: mediagen: invalid argument: key "a" repeats item 0`},
		"nil args":        {items: []batch.Item{{Key: "a"}}, want: "item 0: mediagen: invalid argument: no args"},
		"typed nil args":  {items: []batch.Item{{Key: "a", Args: nilArgs}}, want: "no args"},
		"long key":        {items: []batch.Item{{Key: strings.Repeat("k", 256), Args: ok}}, want: "a key of 256 bytes"},
		"zero ceiling":    {items: images("x", 1), opts: []batch.Option{batch.WithConcurrency(0)}, want: "batch.WithConcurrency(0): "},
		"negative budget": {items: images("x", 1), opts: []batch.Option{batch.WithBudget(-1)}, want: "batch.WithBudget(-1): "},
		"fit alone":       {items: images("x", 1), opts: []batch.Option{batch.WithFitBudget()}, want: "batch.WithFitBudget: needs batch.WithBudget"},
		"empty folder":    {items: images("x", 1), opts: []batch.Option{batch.WithSaveTo("")}, want: "batch.WithSaveTo: "},
		"nil progress":    {items: images("x", 1), opts: []batch.Option{batch.OnProgress(nil)}, want: "batch.OnProgress: "},
		"unknown price":   {items: []batch.Item{{Key: "a", Args: client.RawArgs{FeatureName: "image/none"}}}, opts: []batch.Option{batch.WithBudget(1)}, want: `item 0 (key "a")`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := clienttest.NewServer(t)
			var sent atomic.Int32
			count := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
				if req.Method != http.MethodGet {
					sent.Add(1)
				}
				return next(req)
			}
			res, err := batch.Run(t.Context(), srv.Client(client.WithMiddleware(count)), tc.items, tc.opts...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			if strings.HasPrefix(name, "missing") || strings.Contains(name, "args") || strings.Contains(name, "key") {
				assert.ErrorIs(t, err, client.ErrInvalidArgument)
			}
			assert.Empty(t, res.Items)
			assert.Zero(t, sent.Load(), "requests other than GET")
			assert.Equal(t, clienttest.Balance, srv.Balance())
		})
	}
	_, err := batch.Run(t.Context(), nil, images("x", 1))
	assert.ErrorContains(t, err, "nil client")
}

func TestSaveToRecordsTheSave(t *testing.T) {
	srv := clienttest.NewServer(t)
	c := srv.Client(client.WithJournal(journal.NewMemory()))
	dir := t.TempDir()
	items := images("save", 12)
	res, err := batch.Run(t.Context(), c, items, batch.WithSaveTo(dir), batch.WithConcurrency(3))
	require.NoError(t, err)
	assert.Equal(t, 12, res.Done)
	for _, it := range res.Items {
		require.NoError(t, it.Err)
		assert.Equal(t, filepath.Join(dir, it.Generation.ID+".png"), it.SavedPath)
		b, err := os.ReadFile(it.SavedPath)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(b), "\x89PNG"), it.SavedPath)
	}
	for r, err := range c.Unfinished(t.Context()) {
		require.NoError(t, err)
		t.Errorf("unfinished after the run: %s", r.Key)
	}
}

func TestEmptyRun(t *testing.T) {
	srv := clienttest.NewServer(t)
	res, err := batch.Run(t.Context(), srv.Client(), nil, batch.WithBudget(0))
	require.NoError(t, err)
	assert.Equal(t, batch.Result{Items: []batch.ItemResult{}}, res)
}

func TestRunStoppedBeforeSending(t *testing.T) {
	srv := clienttest.NewServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := batch.Run(ctx, srv.Client(), images("stopped", 3))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 3, res.Skipped)
	for _, it := range res.Items {
		assert.True(t, errors.Is(it.Err, context.Canceled), it.Err)
	}
}

// A service that asks for a wait longer than the run waits (a 10-year
// Retry-After on every create, past WithMaxPause) ends each item at once,
// naming the wait,
// and the run goes on to its end: nothing sleeps for years, on the wall
// clock or the server's.
func TestLongRetryAfterEndsItemsNotTheRun(t *testing.T) {
	const decade = 10 * 365 * 24 * time.Hour
	srv := clienttest.NewServer(t, clienttest.WithFaults(clienttest.Faults{HTTPStatus: 1, Statuses: []int{429},
		RetryAfter: decade, Paths: []string{"/v3/generations"}, Methods: []string{http.MethodPost}}))
	start := srv.Now()
	res, err := batch.Run(t.Context(), srv.Client(), images("heron", 4))
	require.NoError(t, err)
	require.Len(t, res.Items, 4)
	for _, it := range res.Items {
		require.Error(t, it.Err)
		assert.Contains(t, it.Err.Error(), "longer than the run waits")
		assert.Contains(t, it.Err.Error(), "87600h0m0s")
		assert.ErrorIs(t, it.Err, client.ErrRateLimited)
	}
	assert.Less(t, srv.Now().Sub(start), time.Hour, "no wait of years, even on the server's clock")
	assert.Equal(t, clienttest.Balance, srv.Balance(), "nothing charged")
}

// The same for the run's waits: a check answered with a 10-year
// Retry-After ends its item, naming the wait, with the generation it has.
func TestLongRetryAfterOnWaitsEndsItems(t *testing.T) {
	const decade = 10 * 365 * 24 * time.Hour
	srv := clienttest.NewServer(t, clienttest.WithFaults(clienttest.Faults{HTTPStatus: 1, Statuses: []int{429},
		RetryAfter: decade, Paths: []string{"/v3/generations"}, Methods: []string{http.MethodGet}}))
	start := srv.Now()
	res, err := batch.Run(t.Context(), srv.Client(), images("wren", 3))
	require.NoError(t, err)
	for _, it := range res.Items {
		require.Error(t, it.Err)
		assert.Contains(t, it.Err.Error(), "longer than the run waits")
		require.NotNil(t, it.Generation, "created before the wait failed")
	}
	assert.Less(t, srv.Now().Sub(start), time.Hour)
}

// A run stopped while it pauses before waiting again (the service asked
// to slow down) ends the item with the last status its wait saw, not an
// unknown one and the create's copy.
func TestRunStoppedBeforeAWaitAgainKeepsTheLastStatus(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.WithWallClock())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var reads atomic.Int32
	var once sync.Once
	slowDown := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if req.Method != http.MethodGet || !strings.HasPrefix(req.URL.Path, "/v3/generations") || reads.Add(1) == 1 {
			return next(req)
		}
		once.Do(func() { time.AfterFunc(300*time.Millisecond, cancel) }) // during the run's 1 s pause
		body := `{"error":{"code":"rate_limited","message":"slow down"}}`
		return &http.Response{StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests",
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req, ContentLength: int64(len(body)),
			Header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"1"}},
			Body:   io.NopCloser(strings.NewReader(body))}, nil
	}
	res, err := batch.Run(ctx, srv.Client(), images("paused", 1),
		batch.WithClientOptions(client.WithMaxRetries(0), client.WithMiddleware(slowDown)))
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, res.Items, 1)
	it := res.Items[0]
	var gaveUp *poll.GaveUpError
	require.ErrorAs(t, it.Err, &gaveUp)
	assert.ErrorIs(t, it.Err, context.Canceled)
	require.NotNil(t, gaveUp.Last, "the last generation the wait saw")
	assert.NotEmpty(t, gaveUp.Status)
	assert.Equal(t, string(gaveUp.Last.Status), gaveUp.Status)
	assert.Same(t, gaveUp.Last, it.Generation)
}

// A create that may have been charged (the service took it, the answer was
// lost) and whose search was rate limited to the end of its budget comes
// back as rate limited: the run sends the item again later, and that create
// must search for the first one, not charge the key a second time.
func TestRateLimitedSearchDoesNotChargeTwice(t *testing.T) {
	srv := clienttest.NewServer(t)
	start := srv.Now()
	var posts atomic.Int32
	cutOff := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if isCreate(req) && posts.Add(1) == 1 {
			resp, err := next(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				err = errors.New("connection reset after the service took the create")
			}
			return nil, err
		}
		if req.Method == http.MethodGet && req.URL.Path == "/v3/generations" && srv.Now().Before(start.Add(client.SearchBudget+15*time.Second)) {
			body := `{"error":{"code":"rate_limited","message":"slow down"}}`
			return &http.Response{StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests",
				Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req, ContentLength: int64(len(body)),
				Header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"30"}},
				Body:   io.NopCloser(strings.NewReader(body))}, nil
		}
		return next(req)
	}
	items := images("unsure", 1)
	c := srv.Client(client.WithJournalHold(time.Second), client.WithMiddleware(cutOff))
	res, err := batch.Run(t.Context(), c, items)
	require.NoError(t, err)
	require.NoError(t, res.Items[0].Err)
	assert.Equal(t, 1, res.Done)
	requireOnceEach(t, srv.Client(), items)
	assert.InDelta(t, clienttest.Balance-imagePrice, srv.Balance(), 1e-9, "charged once")
}
