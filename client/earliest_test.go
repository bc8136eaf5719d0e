package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
)

// The search after a lost answer bounds its window by the client's recent
// rows only where they say something of the lost row. These tests each
// break one thing that bound took for granted; each lost row must still be
// found, and charged once.

// rewriteDates rewrites every requestDate in the answers to requests
// below path with f.
type rewriteDates struct {
	next http.RoundTripper
	path string
	f    func(time.Time) time.Time
}

func (s rewriteDates) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err != nil || !strings.HasPrefix(r.URL.Path, s.path) || resp.StatusCode/100 != 2 {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("rewriteDates: %w", err)
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if str, ok := e.(string); ok && k == "requestDate" {
					if at, err := time.Parse(time.RFC3339Nano, str); err == nil {
						v[k] = s.f(at).UTC().Format(time.RFC3339Nano)
					}
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	body, _ = json.Marshal(v)
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return resp, nil
}

// A service may date one kind of row to the second and another precisely:
// a burst of generations dated precisely says nothing of how a voice
// clone's date is rounded, nor of the clock that dates it.
func TestLostCloneFoundAfterABurstOfGenerations(t *testing.T) {
	srv, clean, ctx := setup(t)
	sample := uploadWAV(t, ctx, clean, 12*time.Second)
	wholeSeconds := rewriteDates{next: loopback(t), path: "/v3/voices", f: func(at time.Time) time.Time { return at.Truncate(time.Second) }}
	drop := &dropOnce{next: wholeSeconds, method: http.MethodPost, path: "/v3/voices"}
	c := srv.Client(client.WithHTTPClient(&http.Client{Transport: drop}))
	srv.Advance(250 * time.Millisecond) // generations dated in fractions of a second
	createImages(t, c, 20)
	before := srv.Balance()

	v, err := c.CloneVoice(ctx, client.CloneVoiceParams{Name: "Host", Audio: sample})
	require.NoError(t, err)
	require.True(t, drop.dropped)
	mine, err := clean.Voices(ctx, client.VoiceFilter{Owner: mediagen.VoiceOwnerProject})
	require.NoError(t, err)
	assert.Len(t, mine, 1, "the lost answer's clone found, not created again")
	assert.Equal(t, mine[0].ID, v.ID)
	price, err := clean.Pricing(ctx)
	require.NoError(t, err)
	e, err := price.Estimate(client.RawArgs{FeatureName: mediagen.FeatureVoiceClone})
	require.NoError(t, err)
	assert.InDelta(t, e.Min, before-srv.Balance(), 1e-9, "charged once")
}

// ownClock is a test clock of the caller's that moves only when slept on
// or stepped: the service's clock does not follow it.
type ownClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *ownClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *ownClock) Sleep(ctx context.Context, d time.Duration) error {
	c.step(max(d, 0))
	return ctx.Err()
}

func (c *ownClock) step(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// A client whose Clock is not the one the service's clock follows (a
// caller's test clock, a clock without monotonic readings that steps)
// measures the time since its recent rows wrongly: a clock 10 s ahead of
// where it was at its last row must not push the search past the lost row.
func TestLostAnswerFoundWhenTheClientsClockMovesAlone(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.WithWallClock())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clock := &ownClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	drop := &dropOnce{next: loopback(t), method: http.MethodPost, path: "/v3/generations", skip: 20}
	c := srv.Client(client.WithClock(clock), client.WithHTTPClient(&http.Client{Transport: drop}))
	before := srv.Balance()
	spent := createImages(t, c, 20)
	clock.step(10 * time.Second)

	g, err := c.CreateGeneration(ctx, asArgs(t, mediagen.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: "a red kite"}))
	require.NoError(t, err)
	require.True(t, drop.dropped)
	page, err := srv.Client().ListGenerations(ctx, client.ListParams{Limit: 100})
	require.NoError(t, err)
	assert.Len(t, page.Generations, 21, "the lost answer's generation found, not created again")
	assert.InDelta(t, before-spent-g.BalanceUsed, srv.Balance(), 1e-9, "charged once")
}

// stickyReplicas is two replicas of the service, the second dating its
// rows and answers d ahead of the first: creates alternate between them,
// the first one's first, until alternate have been sent, then go to the
// second (a kept-alive connection) until sticky more, then to the first
// again. Listings come from the second.
type stickyReplicas struct {
	next              http.RoundTripper
	d                 time.Duration
	alternate, sticky int
	mu                sync.Mutex
	creates           int
}

func (s *stickyReplicas) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err != nil || r.URL.Path != "/v3/generations" {
		return resp, err
	}
	if r.Method == http.MethodPost {
		s.mu.Lock()
		n := s.creates
		s.creates++
		s.mu.Unlock()
		if n < s.alternate && n%2 == 0 || n >= s.alternate+s.sticky {
			return resp, nil
		}
		ahead := func(at time.Time) time.Time { return at.Add(s.d) }
		if resp, err = (rewriteDates{next: constant{resp}, path: "/", f: ahead}).RoundTrip(r); err != nil {
			return nil, err
		}
	}
	return dateShift{d: s.d}.shift(resp), nil
}

// constant answers resp.
type constant struct{ resp *http.Response }

func (c constant) RoundTrip(*http.Request) (*http.Response, error) { return c.resp, nil }

// A replica whose clock runs behind, seen before the client's last 64 rows
// all came from another (a kept-alive connection), may date the lost row:
// the recent rows do not show every clock the service has.
func TestLostAnswerFoundOnAReplicaTheRecentRowsMissed(t *testing.T) {
	srv, clean, ctx := setup(t)
	const alternate, sticky = 20, 70
	replicas := &stickyReplicas{next: loopback(t), d: 2 * time.Second, alternate: alternate, sticky: sticky}
	drop := &dropOnce{next: replicas, method: http.MethodPost, path: "/v3/generations", skip: alternate + sticky}
	c := srv.Client(client.WithHTTPClient(&http.Client{Transport: drop}))
	before := srv.Balance()
	spent := createImages(t, c, alternate+sticky)

	g, err := c.CreateGeneration(ctx, asArgs(t, mediagen.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: "a red kite"}))
	require.NoError(t, err)
	require.True(t, drop.dropped)
	page, err := clean.ListGenerations(ctx, client.ListParams{Limit: 100})
	require.NoError(t, err)
	assert.Len(t, page.Generations, alternate+sticky+1, "the lost answer's generation found, not created again")
	assert.InDelta(t, before-spent-g.BalanceUsed, srv.Balance(), 1e-9, "charged once")
}
