package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/testlog"
)

// faultTransport injects the failures that tempt a client to charge twice.
// Each request draws from one seeded source: the sequence of faults is fixed
// by the seed, which request meets which depends on scheduling.
type faultTransport struct {
	next http.RoundTripper

	// Probabilities, exclusive, per request under /v3/.
	tooMany    float64 // 429 with Retry-After: 0, not processed
	neverSent  float64 // a dial error, not processed
	dropAfter  float64 // processed, then the connection resets before the answer
	badGateway float64 // processed, then a 502 or 503 replaces the answer
	unreached  float64 // a 502 or 503 from a proxy that never reached the service

	mu     sync.Mutex
	rng    *rand.Rand
	counts map[string]int
}

func newFaultTransport(next http.RoundTripper, seed uint64) *faultTransport {
	return &faultTransport{
		next: next, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), counts: map[string]int{},
		tooMany: 0.06, neverSent: 0.04, dropAfter: 0.10, badGateway: 0.06, unreached: 0.04,
	}
}

func (f *faultTransport) draw(r *http.Request) (string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	x := f.rng.Float64()
	status := []int{502, 503}[f.rng.IntN(2)]
	fault := "none"
	switch {
	case x < f.tooMany:
		fault = "429"
	case x < f.tooMany+f.neverSent:
		fault = "never sent"
	case x < f.tooMany+f.neverSent+f.dropAfter:
		fault = "drop after"
	case x < f.tooMany+f.neverSent+f.dropAfter+f.badGateway:
		fault = "5xx after"
	case x < f.tooMany+f.neverSent+f.dropAfter+f.badGateway+f.unreached:
		fault = "5xx unreached"
	}
	f.counts[r.Method+" "+r.URL.Path+" "+fault]++
	return fault, status
}

func (f *faultTransport) count(method, path, fault string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[method+" "+path+" "+fault]
}

func (f *faultTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	fault, status := f.draw(r)
	switch fault {
	case "429":
		drain(r)
		return synthetic(r, http.StatusTooManyRequests, "rate_limited", map[string]string{"Retry-After": "0"}), nil
	case "never sent":
		drain(r)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	case "5xx unreached":
		drain(r)
		return synthetic(r, status, "", nil), nil
	}
	resp, err := f.next.RoundTrip(r)
	if err != nil || fault == "none" {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if fault == "drop after" {
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	}
	return synthetic(r, status, "", nil), nil
}

func drain(r *http.Request) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
}

func synthetic(r *http.Request, status int, code string, header map[string]string) *http.Response {
	body := "<html>upstream unavailable</html>"
	ct := "text/html"
	if code != "" {
		body, ct = fmt.Sprintf(`{"error":{"code":%q,"message":"injected"}}`, code), "application/json"
	}
	h := http.Header{"Content-Type": {ct}}
	for k, v := range header {
		h.Set(k, v)
	}
	return &http.Response{
		StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r,
	}
}

func TestCreateGenerationUnderFaultsChargesOnce(t *testing.T) {
	const calls, workers = 1000, 16
	srv, clean, ctx := setup(t)
	srv.SetBalance(10_000)
	before := srv.Balance()
	argsOf := mixedArgs(t, clean)

	seed := uint64(7)
	if s, err := strconv.ParseUint(os.Getenv("MEDIAGEN_FAULT_SEED"), 10, 64); err == nil {
		seed = s // to replay another sequence of faults
	}
	faults := newFaultTransport(loopback(t), seed)
	logger, logs := testlog.DebugTextLogger()
	c := srv.Client(
		client.WithHTTPClient(&http.Client{Transport: faults}),
		client.WithMaxRetries(10),
		client.WithRetryWait(0, 2*time.Millisecond),
		client.WithLogger(logger),
	)

	results := createConcurrently(ctx, c, calls, workers, argsOf)
	assertChargedOnce(t, srv, clean, before, results, argsOf)

	// The faults did happen, and reconciliation did its work.
	for _, fault := range []string{"429", "never sent", "drop after", "5xx after", "5xx unreached"} {
		assert.Positive(t, faults.count("POST", "/v3/generations", fault), fault)
	}
	assert.Contains(t, logs.String(), "found and claimed")
	assert.Contains(t, logs.String(), "submitting again")
	assert.NotContains(t, logs.String(), srv.APIKey())
}

func TestCreateGenerationUnderServerFaultsChargesOnce(t *testing.T) {
	const calls, workers = 300, 12
	srv, clean, ctx := setup(t)
	srv.SetBalance(10_000)
	before := srv.Balance()
	argsOf := mixedArgs(t, clean)

	// The server drops connections before and after processing and answers
	// 5xx in place of processing, on every API path.
	require.NoError(t, srv.SetFaults(clienttest.Faults{
		Seed: 11, HTTPStatus: 0.08, Statuses: []int{500, 502, 503}, DropBefore: 0.05, DropAfter: 0.10,
	}))
	c := srv.Client(client.WithMaxRetries(10), client.WithRetryWait(0, 2*time.Millisecond))
	results := createConcurrently(ctx, c, calls, workers, argsOf)
	require.NoError(t, srv.SetFaults(clienttest.Faults{}))
	assertChargedOnce(t, srv, clean, before, results, argsOf)

	counts := srv.FaultCounts()
	assert.Positive(t, counts.DroppedAfter)
	assert.Positive(t, counts.DroppedBefore)
	assert.Positive(t, counts.Replaced)
}

// mixedArgs returns the arguments of call i: distinct ones mixed with
// identical ones, whose generations are interchangeable and so the hardest
// to attribute.
func mixedArgs(t *testing.T, c *client.Client) func(i int) (mediagen.Feature, any) {
	ctx := t.Context()
	img := uploadPNG(t, ctx, c)
	voice := catalogVoice(t, ctx, c)
	return func(i int) (mediagen.Feature, any) {
		switch i % 5 {
		case 0:
			return mediagen.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: "same prompt"}
		case 1:
			return mediagen.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: fmt.Sprintf("prompt %d", i), FineDetails: i%2 == 0}
		case 2:
			return "logo-reveal", client.LogoRevealArgs{Image: img, Prompt: "same reveal", Duration: 3}
		case 3:
			return mediagen.FeatureAudioVoiceover, map[string]any{"voiceId": voice.ID, "script": fmt.Sprintf("line %d", i)}
		default:
			return mediagen.FeatureImageProductShot, client.ProductShotArgs{Image: img, Prompt: "same shot"}
		}
	}
}

type createResult struct {
	g   *mediagen.Generation
	err error
}

// createConcurrently makes calls creates on a pool of workers.
func createConcurrently(ctx context.Context, c *client.Client, calls, workers int, argsOf func(int) (mediagen.Feature, any)) []createResult {
	results := make([]createResult, calls)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				feature, args := argsOf(i)
				a, err := toArgs(feature, args)
				if err != nil {
					results[i] = createResult{nil, err}
					continue
				}
				g, err := c.CreateGeneration(ctx, a)
				results[i] = createResult{g, err}
			}
		})
	}
	for i := range calls {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return results
}

// assertChargedOnce checks that the server holds exactly the generations the
// calls returned, each handed to one caller with the arguments it sent, and
// that the balance moved by exactly their charges.
func assertChargedOnce(t *testing.T, srv *clienttest.Server, clean *client.Client, before float64, results []createResult, argsOf func(int) (mediagen.Feature, any)) {
	t.Helper()
	returned := map[string]*mediagen.Generation{}
	var sumReturned float64
	failures := 0
	for i, r := range results {
		if r.err != nil {
			failures++
			t.Logf("call %d: %v", i, r.err)
			continue
		}
		require.NotContains(t, returned, r.g.ID, "generation %s handed to two callers", r.g.ID)
		returned[r.g.ID] = r.g
		sumReturned += r.g.BalanceUsed
		feature, args := argsOf(i)
		assert.Equal(t, feature, r.g.Feature)
		want, err := clientArgs(args)
		require.NoError(t, err)
		assert.Equal(t, want, r.g.Params, "call %d got a generation of other arguments", i)
	}

	var onServer []*mediagen.Generation
	var sumServer float64
	for g, err := range clean.Generations(t.Context(), client.ListParams{Limit: 100}) {
		require.NoError(t, err)
		onServer = append(onServer, g)
		sumServer += g.BalanceUsed
	}
	assert.Equal(t, len(returned), len(onServer), "as many generations created as returned")
	for _, g := range onServer {
		if _, ok := returned[g.ID]; !ok {
			t.Errorf("generation %s (%s %v) was created but reached no caller", g.ID, g.Feature, g.Params)
		}
	}
	charged := before - srv.Balance()
	assert.InDelta(t, sumServer, charged, 1e-6, "balance moved by exactly the generations' charges")
	assert.InDelta(t, sumReturned, charged, 1e-6)
	assert.LessOrEqual(t, failures, len(results)/100, "failures should be rare with 10 retries")
}

// clientArgs is the JSON object typed args travel as.
func clientArgs(args any) (map[string]any, error) {
	var m map[string]any
	b, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	return m, json.Unmarshal(b, &m)
}

// dropOnce processes the first request matching method and path after
// skip of them, then loses the answer as a reset connection.
type dropOnce struct {
	next         http.RoundTripper
	method, path string
	skip         int
	mu           sync.Mutex
	dropped      bool
}

func (d *dropOnce) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := d.next.RoundTrip(r)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil || d.dropped || r.Method != d.method || r.URL.Path != d.path {
		return resp, err
	}
	if d.skip > 0 {
		d.skip--
		return resp, err
	}
	d.dropped = true
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}

func TestCloneVoiceAnswerLostReturnsTheClone(t *testing.T) {
	srv, clean, ctx := setup(t)
	sample := uploadWAV(t, ctx, clean, 12*time.Second)
	// An older clone of the same name must not be mistaken for this one.
	old, err := clean.CloneVoice(ctx, client.CloneVoiceParams{Name: "Host", Audio: sample})
	require.NoError(t, err)
	srv.Advance(time.Hour)
	before := srv.Balance()

	drop := &dropOnce{next: loopback(t), method: http.MethodPost, path: "/v3/voices"}
	c := srv.Client(client.WithHTTPClient(&http.Client{Transport: drop}))
	v, err := c.CloneVoice(ctx, client.CloneVoiceParams{Name: "Host", Audio: sample})
	require.NoError(t, err)
	assert.True(t, drop.dropped)
	assert.NotEqual(t, old.ID, v.ID)

	mine, err := clean.Voices(ctx, client.VoiceFilter{Owner: mediagen.VoiceOwnerProject})
	require.NoError(t, err)
	assert.Len(t, mine, 2, "one clone created, not two")
	price, err := clean.Pricing(ctx)
	require.NoError(t, err)
	e, err := price.Estimate(client.RawArgs{FeatureName: mediagen.FeatureVoiceClone})
	require.NoError(t, err)
	assert.InDelta(t, e.Min, before-srv.Balance(), 1e-9, "charged once")
}

func TestCreateGenerationAnswerLostReturnsTheGeneration(t *testing.T) {
	srv, clean, ctx := setup(t)
	args := client.ImageGenerationArgs{Prompt: "a red kite"}
	// An identical generation an hour older is someone else's.
	old, err := clean.CreateGeneration(ctx, asArgs(t, mediagen.FeatureImageGeneration, args))
	require.NoError(t, err)
	srv.Advance(time.Hour)

	drop := &dropOnce{next: loopback(t), method: http.MethodPost, path: "/v3/generations"}
	c := srv.Client(client.WithHTTPClient(&http.Client{Transport: drop}))
	g, err := c.CreateGeneration(ctx, asArgs(t, "image-generation", args))
	require.NoError(t, err)
	assert.True(t, drop.dropped)
	assert.NotEqual(t, old.ID, g.ID)
	assert.Equal(t, "image-generation", string(g.Feature))

	page, err := clean.ListGenerations(ctx, client.ListParams{})
	require.NoError(t, err)
	assert.Len(t, page.Generations, 2)
	assert.InDelta(t, clienttest.Balance-old.BalanceUsed-g.BalanceUsed, srv.Balance(), 1e-9)
}

func TestCreateGenerationCancelled(t *testing.T) {
	srv, _, _ := setup(t)
	entered := make(chan struct{})
	slow := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		close(entered)
		<-r.Context().Done()
		return nil, r.Context().Err()
	})
	c := srv.Client(client.WithHTTPClient(&http.Client{Transport: slow}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered
		cancel()
	}()
	_, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "p"})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, clienttest.Balance, srv.Balance())
}

func TestDeleteRetriedAfterLostAnswer(t *testing.T) {
	srv, clean, ctx := setup(t)
	g, err := clean.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "p"})
	require.NoError(t, err)

	drop := &dropOnce{next: loopback(t), method: http.MethodDelete, path: "/v3/generations/" + g.ID}
	c := srv.Client(client.WithHTTPClient(&http.Client{Transport: drop}))
	require.NoError(t, c.DeleteGeneration(ctx, g.ID), "the retry's 404 means the first attempt did it")
	assert.True(t, drop.dropped)
	_, err = clean.GetGeneration(ctx, g.ID)
	assert.ErrorIs(t, err, client.ErrNotFound)
	assert.ErrorIs(t, c.DeleteGeneration(ctx, g.ID), client.ErrNotFound, "a plain 404 stays an error")
}

// untracedDropOnce is dropOnce behind a transport that reports no progress
// through httptrace: it sends each request under a fresh context.
type untracedDropOnce struct{ dropOnce }

func (d *untracedDropOnce) RoundTrip(r *http.Request) (*http.Response, error) {
	return d.dropOnce.RoundTrip(r.Clone(context.Background()))
}

func TestCreateGenerationAnswerLostByUntracedTransportChargesOnce(t *testing.T) {
	srv, clean, ctx := setup(t)
	drop := &untracedDropOnce{dropOnce{next: loopback(t), method: http.MethodPost, path: "/v3/generations"}}
	c := srv.Client(client.WithHTTPClient(&http.Client{Transport: drop}))
	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a kite"})
	require.NoError(t, err)
	assert.True(t, drop.dropped)

	page, err := clean.ListGenerations(ctx, client.ListParams{})
	require.NoError(t, err)
	require.Len(t, page.Generations, 1, "the lost answer's generation is returned, not made again")
	assert.Equal(t, g.ID, page.Generations[0].ID)
	assert.InDelta(t, clienttest.Balance-g.BalanceUsed, srv.Balance(), 1e-9, "charged once")
}

// processedThen sends r on to the service, drops the answer and returns a
// gateway's status instead: the request took effect, the caller cannot
// know.
func processedThen(next http.RoundTripper, r *http.Request, status int) (*http.Response, error) {
	resp, err := next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return synthetic(r, status, "", nil), nil
}

// TestSearchOutlastsRateLimits: the client's retry waits are capped at
// 10 ms, so a 429 asking for 1 s ends its retries at once. The search after
// an ambiguous failure has a budget of its own: it waits the Retry-After,
// keeps going and finds the generation, where giving up would leave the
// caller not knowing whether it was charged.
func TestSearchOutlastsRateLimits(t *testing.T) {
	const limited = 4
	srv, clean, ctx := setup(t)
	next := loopback(t)
	clk := newServerClock(srv)
	c, rec := recorded(t, srv, func(r *http.Request, n int) (*http.Response, error) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v3/generations" && n == 0:
			return processedThen(next, r, http.StatusBadGateway)
		case r.Method == http.MethodGet && r.URL.Path == "/v3/generations" && n < limited:
			return synthetic(r, http.StatusTooManyRequests, "rate_limited", map[string]string{"Retry-After": "1"}), nil
		}
		return nil, nil
	}, clk.Option())
	require.Equal(t, 10*time.Millisecond, c.RetryPolicy().WaitMax)

	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a stork"})
	require.NoError(t, err, "no UncertainError: the search outlasted the 429s")
	assert.Equal(t, 1, rec.count(http.MethodPost, "/v3/generations"), "found, not submitted again")
	assert.Equal(t, limited+1, rec.count(http.MethodGet, "/v3/generations"))
	long := 0
	for _, d := range clk.Waits() {
		if d >= time.Second {
			long++
		}
	}
	assert.Equal(t, limited, long, "each Retry-After was waited for, beyond the policy's 10 ms: %v", clk.Waits())

	page, err := clean.ListGenerations(ctx, client.ListParams{})
	require.NoError(t, err)
	require.Len(t, page.Generations, 1)
	assert.Equal(t, g.ID, page.Generations[0].ID)
	assert.InDelta(t, clienttest.Balance-g.BalanceUsed, srv.Balance(), 1e-9, "charged once")
}

// failingSearch answers the first POST to path as answer says, and every
// list of path with 503 and a Retry-After of 30 s while failing is set.
func failingSearch(next http.RoundTripper, path string, reached bool, failing *atomic.Bool) func(*http.Request, int) (*http.Response, error) {
	return func(r *http.Request, n int) (*http.Response, error) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == path && n == 0:
			if reached {
				return processedThen(next, r, http.StatusBadGateway)
			}
			drain(r)
			return synthetic(r, http.StatusBadGateway, "", nil), nil // a proxy that never reached the service
		case r.Method == http.MethodGet && r.URL.Path == path && failing.Load():
			return synthetic(r, http.StatusServiceUnavailable, "", map[string]string{"Retry-After": "30"}), nil
		}
		return nil, nil
	}
}

func TestUncertainErrorResolvedByFindGeneration(t *testing.T) {
	for _, reached := range []bool{true, false} {
		name := map[bool]string{true: "the attempt created it", false: "the attempt never arrived"}[reached]
		t.Run(name, func(t *testing.T) {
			srv, clean, ctx := setup(t)
			var failing atomic.Bool
			failing.Store(true)
			c, rec := recorded(t, srv, failingSearch(loopback(t), "/v3/generations", reached, &failing), newServerClock(srv).Option())
			args := client.ImageGenerationArgs{Prompt: "a stork", AspectRatio: client.Aspect1x1}

			start := srv.Now()
			_, err := c.CreateGeneration(ctx, args)
			var uerr *client.UncertainError
			require.ErrorAs(t, err, &uerr)
			assert.Equal(t, "generation", uerr.Op)
			assert.Equal(t, client.RawArgs{FeatureName: mediagen.FeatureImageGeneration, Values: map[string]any{"prompt": "a stork", "aspectRatio": "1:1"}}, uerr.Args)
			assert.Nil(t, uerr.Clone)
			assert.True(t, start.Equal(uerr.Start), "%s, want %s", uerr.Start, start)
			assert.GreaterOrEqual(t, uerr.End.Sub(uerr.Start), client.SearchBudget-30*time.Second, "the search used its budget")
			var apiErr *client.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Contains(t, err.Error(), "FindGeneration")
			assert.Equal(t, 1, rec.count(http.MethodPost, "/v3/generations"), "not submitted again while unsure")

			// The service recovers; the caller finishes the search.
			failing.Store(false)
			found, err := c.FindGeneration(ctx, uerr)
			require.NoError(t, err)
			if reached {
				// Asking again, even through a copy of the error and from
				// two goroutines at once, returns the same generation: a
				// nil would read as "nothing was created, submit again".
				copied := *uerr
				var wg sync.WaitGroup
				again := make([]*mediagen.Generation, 2)
				for i, e := range []*client.UncertainError{uerr, &copied} {
					wg.Go(func() {
						g, err := c.FindGeneration(ctx, e)
						assert.NoError(t, err)
						again[i] = g
					})
				}
				wg.Wait()
				for _, g := range again {
					require.NotNil(t, g)
					assert.Equal(t, found.ID, g.ID)
				}
			}
			page, err := clean.ListGenerations(ctx, client.ListParams{})
			require.NoError(t, err)
			if !reached {
				assert.Nil(t, found, "nothing was created: submitting again is safe")
				assert.Empty(t, page.Generations)
				assert.Equal(t, clienttest.Balance, srv.Balance())
				found, err = c.CreateGeneration(ctx, args)
				require.NoError(t, err)
				page, err = clean.ListGenerations(ctx, client.ListParams{})
				require.NoError(t, err)
			}
			require.NotNil(t, found)
			require.Len(t, page.Generations, 1)
			assert.Equal(t, found.ID, page.Generations[0].ID)
			assert.Equal(t, map[string]any{"prompt": "a stork", "aspectRatio": "1:1"}, found.Params)
			assert.InDelta(t, clienttest.Balance-found.BalanceUsed, srv.Balance(), 1e-9, "charged once")
		})
	}
}

func TestUncertainErrorResolvedByFindVoiceClone(t *testing.T) {
	srv, clean, ctx := setup(t)
	sample := uploadWAV(t, ctx, clean, 12*time.Second)
	var failing atomic.Bool
	failing.Store(true)
	c, rec := recorded(t, srv, failingSearch(loopback(t), "/v3/voices", true, &failing), newServerClock(srv).Option())

	params := client.CloneVoiceParams{Name: "Host", Audio: sample, Description: "warm"}
	_, err := c.CloneVoice(ctx, params)
	var uerr *client.UncertainError
	require.ErrorAs(t, err, &uerr)
	assert.Equal(t, "voice clone", uerr.Op)
	assert.Equal(t, &params, uerr.Clone)
	assert.Nil(t, uerr.Args)
	assert.Equal(t, 1, rec.count(http.MethodPost, "/v3/voices"))

	_, err = c.FindGeneration(ctx, uerr)
	assert.ErrorIs(t, err, client.ErrInvalidArgument, "the error of a clone")
	_, err = c.FindVoiceClone(ctx, nil)
	assert.ErrorIs(t, err, client.ErrInvalidArgument)

	failing.Store(false)
	v, err := c.FindVoiceClone(ctx, uerr)
	require.NoError(t, err)
	require.NotNil(t, v)
	assert.Equal(t, "Host", v.Name)
	again, err := c.FindVoiceClone(ctx, uerr)
	require.NoError(t, err)
	require.NotNil(t, again, "asked again, the same clone")
	assert.Equal(t, v.ID, again.ID)
	mine, err := clean.Voices(ctx, client.VoiceFilter{Owner: mediagen.VoiceOwnerProject})
	require.NoError(t, err)
	require.Len(t, mine, 1)
	assert.Equal(t, v.ID, mine[0].ID)
	price, err := clean.Pricing(ctx)
	require.NoError(t, err)
	e, err := price.Estimate(client.RawArgs{FeatureName: mediagen.FeatureVoiceClone})
	require.NoError(t, err)
	assert.InDelta(t, clienttest.Balance-e.Min, srv.Balance(), 1e-9, "charged once")
}

// TestMiddlewareRefusalIsNotAmbiguous: a middleware that fails a create
// without calling next kept the request from leaving, so the call returns
// its error at once: no retry, no search, nothing charged.
func TestMiddlewareRefusalIsNotAmbiguous(t *testing.T) {
	srv, _, ctx := setup(t)
	errBreaker := errors.New("circuit open")
	var calls atomic.Int32
	refuse := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		calls.Add(1)
		return nil, errBreaker
	}
	c, rec := recorded(t, srv, nil)
	_, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a tern"}, client.WithMiddleware(refuse))
	require.ErrorIs(t, err, errBreaker)
	var uerr *client.UncertainError
	assert.False(t, errors.As(err, &uerr), "not uncertain: the request never left")
	assert.EqualValues(t, 1, calls.Load(), "not retried")
	assert.Empty(t, rec.requests("/v3/"), "nothing reached the service")
	assert.Equal(t, clienttest.Balance, srv.Balance())

	_, err = c.CloneVoice(ctx, client.CloneVoiceParams{Name: "Host", Audio: "file_x"}, client.WithMiddleware(refuse))
	require.ErrorIs(t, err, errBreaker)
	assert.EqualValues(t, 2, calls.Load())

	// A middleware that sends the request and then fails the answer may
	// have let a charge through: that is still searched for, and found.
	lose := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		if err == nil && req.Method == http.MethodPost {
			resp.Body.Close()
			return nil, errors.New("answer lost after sending")
		}
		return resp, err
	}
	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a tern"}, client.WithMiddleware(lose))
	require.NoError(t, err)
	require.NotNil(t, g)
	assert.Equal(t, 1, rec.count(http.MethodPost, "/v3/generations"), "found, not submitted again")
}

// A create answered 503 with a Retry-After (a service shedding load) may
// still have been processed; the search for it waits out the Retry-After
// before listing, as every other request does, and finds it.
func TestSearchAfterAmbiguousFailureHonoursRetryAfter(t *testing.T) {
	srv, clean, ctx := setup(t)
	next := loopback(t)
	var mu sync.Mutex
	var failedAt, searchedAt time.Time
	tr := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		first := failedAt.IsZero() && r.Method == http.MethodPost && r.URL.Path == "/v3/generations"
		if first {
			failedAt = srv.Now()
		}
		if r.Method == http.MethodGet && r.URL.Path == "/v3/generations" && searchedAt.IsZero() {
			searchedAt = srv.Now()
		}
		mu.Unlock()
		if first {
			resp, err := next.RoundTrip(r)
			if err != nil {
				return nil, err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			return synthetic(r, http.StatusServiceUnavailable, "", map[string]string{"Retry-After": "30"}), nil
		}
		return next.RoundTrip(r)
	})
	c := srv.Client(client.WithHTTPClient(&http.Client{Transport: tr}))
	g, err := c.CreateGeneration(ctx, asArgs(t, mediagen.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: "a busy kite"}))
	require.NoError(t, err)
	require.False(t, searchedAt.IsZero())
	assert.GreaterOrEqual(t, searchedAt.Sub(failedAt), 30*time.Second, "the search waited out the Retry-After")
	page, err := clean.ListGenerations(ctx, client.ListParams{})
	require.NoError(t, err)
	require.Len(t, page.Generations, 1, "found, not created again")
	assert.Equal(t, g.ID, page.Generations[0].ID)
}

// A keyed create that may have been charged (answered 502 or cut off after
// the service took it), and whose search could not tell (the service
// unreachable, or rate limiting it, for the whole search budget), keeps its
// key held: the search's error, which alone would mean "nothing charged",
// must not free it, or the next call with the key sends again and charges
// twice.
func TestUncertainKeyedCallKeepsItsKey(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cutOff bool // the create's answer is lost, not a 502
		search func(*http.Request) (*http.Response, error)
	}{
		{"502 then unreachable", false, func(*http.Request) (*http.Response, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		}},
		{"cut off then rate limited", true, func(r *http.Request) (*http.Response, error) {
			return synthetic(r, http.StatusTooManyRequests, "rate_limited", map[string]string{"Retry-After": "30"}), nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, clean, ctx := setup(t)
			next := loopback(t)
			var failing atomic.Bool
			failing.Store(true)
			j := journal.NewMemory()
			c, rec := recorded(t, srv, func(r *http.Request, n int) (*http.Response, error) {
				switch {
				case r.Method == http.MethodPost && r.URL.Path == "/v3/generations" && n == 0:
					resp, err := processedThen(next, r, http.StatusBadGateway)
					if err == nil && tc.cutOff {
						return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
					}
					return resp, err
				case r.Method == http.MethodGet && r.URL.Path == "/v3/generations" && failing.Load():
					return tc.search(r)
				}
				return nil, nil
			}, newServerClock(srv).Option(), client.WithJournal(j), client.WithJournalHold(time.Second))
			args := client.ImageGenerationArgs{Prompt: "an unsure stork"}

			_, err := c.CreateGeneration(ctx, args, client.WithIdempotencyKey("order-unsure"))
			var uerr *client.UncertainError
			require.ErrorAs(t, err, &uerr)
			_, err = j.Get(ctx, "order-unsure")
			require.NoError(t, err, "the key stays held: its create may have been charged")

			failing.Store(false)
			g, err := c.CreateGeneration(ctx, args, client.WithIdempotencyKey("order-unsure"))
			require.NoError(t, err)
			assert.Equal(t, 1, rec.count(http.MethodPost, "/v3/generations"), "found by the search, not sent again")
			page, err := clean.ListGenerations(ctx, client.ListParams{})
			require.NoError(t, err)
			require.Len(t, page.Generations, 1)
			assert.Equal(t, g.ID, page.Generations[0].ID)
			assert.InDelta(t, clienttest.Balance-g.BalanceUsed, srv.Balance(), 1e-9, "charged once")
		})
	}
}

// A keyed create left uncertain and resolved by FindGeneration: the next
// call with the key, from the same client, returns that generation. Its
// search skipped the row FindGeneration had claimed and sent again.
func TestFoundUncertainKeyedCreateIsNotSentAgain(t *testing.T) {
	srv, clean, ctx := setup(t)
	var failing atomic.Bool
	failing.Store(true)
	c, rec := recorded(t, srv, failingSearch(loopback(t), "/v3/generations", true, &failing), newServerClock(srv).Option(),
		client.WithJournal(journal.NewMemory()), client.WithJournalHold(time.Second))
	args := client.ImageGenerationArgs{Prompt: "a keyed stork"}
	_, err := c.CreateGeneration(ctx, args, client.WithIdempotencyKey("k"))
	var uerr *client.UncertainError
	require.ErrorAs(t, err, &uerr)
	failing.Store(false)
	found, err := c.FindGeneration(ctx, uerr)
	require.NoError(t, err)
	require.NotNil(t, found)

	g, err := c.CreateGeneration(ctx, args, client.WithIdempotencyKey("k"))
	require.NoError(t, err)
	assert.Equal(t, found.ID, g.ID)
	assert.Equal(t, 1, rec.count(http.MethodPost, "/v3/generations"), "not sent again")
	page, err := clean.ListGenerations(ctx, client.ListParams{})
	require.NoError(t, err)
	assert.Len(t, page.Generations, 1)
	assert.InDelta(t, clienttest.Balance-found.BalanceUsed, srv.Balance(), 1e-9, "charged once")
}

// A create answered 303 See Other was processed (RFC 9110: a 303 to a
// POST says so); the redirect is not followed, and the create is searched
// for instead of reported as charging nothing.
func TestSeeOtherAfterCreateIsAmbiguous(t *testing.T) {
	for _, location := range []string{"", "/v3/generations/elsewhere"} {
		t.Run("location "+location, func(t *testing.T) {
			srv, clean, ctx := setup(t)
			next := loopback(t)
			c, rec := recorded(t, srv, func(r *http.Request, n int) (*http.Response, error) {
				if r.Method == http.MethodPost && n == 0 {
					resp, err := processedThen(next, r, http.StatusSeeOther)
					if location != "" {
						resp.Header.Set("Location", location)
					}
					return resp, err
				}
				return nil, nil
			}, newServerClock(srv).Option())
			g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "seen elsewhere"})
			require.NoError(t, err, "the generation the create made is found")
			page, err := clean.ListGenerations(ctx, client.ListParams{})
			require.NoError(t, err)
			require.Len(t, page.Generations, 1)
			assert.Equal(t, page.Generations[0].ID, g.ID)
			assert.Equal(t, 1, rec.count(http.MethodPost, "/v3/generations"), "not sent again")
			assert.Zero(t, rec.count(http.MethodGet, "/v3/generations/elsewhere"), "not followed")
			assert.InDelta(t, clienttest.Balance-g.BalanceUsed, srv.Balance(), 1e-9, "charged once")
		})
	}
}
