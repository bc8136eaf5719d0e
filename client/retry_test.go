package client

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/charge"
)

// scripted is a test server answering each request with the next status of
// a script (the last one repeats) and counting requests per method and path.
type scripted struct {
	statuses []int
	header   http.Header
	body     string
	n        atomic.Int32
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int(s.n.Add(1)) - 1
	code := s.statuses[min(i, len(s.statuses)-1)]
	for k, v := range s.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	body := s.body
	if code >= 400 {
		body = fmt.Sprintf(`{"error":{"code":"e%d","message":"status %d"}}`, code, code)
	}
	_, _ = w.Write([]byte(body))
}

func newScripted(t *testing.T, s *scripted, opts ...Option) *Client {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := New("mg_key_for_retry_tests", append([]Option{WithBaseURL(srv.URL), WithRetryWait(time.Millisecond, 5*time.Millisecond)}, opts...)...)
	require.NoError(t, err)
	return c
}

func TestSafeCallsAreRetried(t *testing.T) {
	s := &scripted{statuses: []int{503, 502, 429, 200}, body: `{"generation":{"id":"gen_1","status":"done"}}`}
	c := newScripted(t, s)
	g, err := c.GetGeneration(context.Background(), "gen_1")
	require.NoError(t, err)
	assert.Equal(t, "gen_1", g.ID)
	assert.EqualValues(t, 4, s.n.Load())
}

func TestRetriesGiveUpWithTheLastAnswer(t *testing.T) {
	s := &scripted{statuses: []int{503}}
	c := newScripted(t, s, WithMaxRetries(2))
	_, err := c.GetGeneration(context.Background(), "gen_1")
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 503, apiErr.StatusCode)
	assert.Equal(t, "e503", apiErr.Code)
	assert.EqualValues(t, 3, s.n.Load(), "one try and two retries")
}

func TestRetryAfterBeyondMaxIsReturned(t *testing.T) {
	s := &scripted{statuses: []int{429}, header: http.Header{"Retry-After": {"30"}}}
	c := newScripted(t, s)
	_, err := c.Voices(context.Background(), VoiceFilter{})
	require.ErrorIs(t, err, ErrRateLimited)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 30*time.Second, apiErr.RetryAfter)
	assert.EqualValues(t, 1, s.n.Load(), "a wait longer than the maximum is left to the caller")
}

func TestRetryWaitStopsWithTheContext(t *testing.T) {
	s := &scripted{statuses: []int{503}, header: http.Header{"Retry-After": {"10"}}}
	c := newScripted(t, s, WithRetryWait(time.Millisecond, 30*time.Second))
	// A second for the first answer to come, even on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.GetGeneration(ctx, "gen_1")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second, "the 10 s Retry-After wait was cut short")
	assert.EqualValues(t, 1, s.n.Load())
}

func TestUploadIsNeverRetried(t *testing.T) {
	s := &scripted{statuses: []int{503, 200}, body: `{"files":[]}`}
	c := newScripted(t, s)
	_, err := c.UploadMultipart(context.Background(), "multipart/form-data; boundary=x", strings.NewReader("--x--\r\n"))
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 503, apiErr.StatusCode)
	assert.EqualValues(t, 1, s.n.Load())
}

func TestUploadURLIsRetriedLikeARead(t *testing.T) {
	s := &scripted{statuses: []int{502, 200}, body: `{"file":{"id":"file_1"},"uploadUrl":"http://storage/x","method":"PUT","headers":{"Content-Type":"image/png","Content-Length":"3"},"expiresIn":900}`}
	c := newScripted(t, s)
	u, err := c.CreateUploadURL(context.Background(), 3, "image/png")
	require.NoError(t, err)
	assert.Equal(t, "file_1", u.File.ID)
	assert.Equal(t, int64(3), u.Headers.ContentLength)
	assert.EqualValues(t, 2, s.n.Load())
}

func TestChargingCallRetriedOnlyWhenNotAccepted(t *testing.T) {
	var posts, lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost && posts.Add(1) == 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"code":"rate_limited","message":"slow down"}}`))
		case r.Method == http.MethodPost && posts.Load() == 2:
			w.WriteHeader(http.StatusBadGateway) // a proxy that never reached the service
		case r.Method == http.MethodPost:
			_, _ = w.Write([]byte(`{"generation":{"id":"gen_new","feature":"image/generation","params":{"prompt":"p"},"requestDate":"2026-01-05T09:00:00Z"}}`))
		default:
			lists.Add(1)
			_, _ = w.Write([]byte(`{"generations":[],"nextCursor":null}`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New("mg_key_for_retry_tests", WithBaseURL(srv.URL), WithRetryWait(time.Millisecond, 5*time.Millisecond))
	require.NoError(t, err)

	g, err := c.CreateGeneration(context.Background(), RawArgs{FeatureName: mediagen.FeatureImageGeneration, Values: map[string]any{"prompt": "p"}})
	require.NoError(t, err)
	assert.Equal(t, "gen_new", g.ID)
	assert.EqualValues(t, 3, posts.Load(), "429 retried at once; 502 resent after the search")
	assert.EqualValues(t, 1, lists.Load(), "the 502 was followed by one search")
}

func TestChargingCallNeverSentIsRetried(t *testing.T) {
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"voice":{"id":"voice_1","name":"Me","owner":"project","status":"running"}}`))
	}))
	t.Cleanup(srv.Close)
	failFirst := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if attempts.Add(1) == 1 {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	c, err := New("mg_key_for_retry_tests", WithBaseURL(srv.URL), WithHTTPClient(&http.Client{Transport: failFirst}), WithRetryWait(time.Millisecond, 5*time.Millisecond))
	require.NoError(t, err)
	v, err := c.CloneVoice(context.Background(), CloneVoiceParams{Name: "Me", Audio: "file_1"})
	require.NoError(t, err)
	assert.Equal(t, "voice_1", v.ID)
	assert.EqualValues(t, 2, attempts.Load())
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestCreateGenerationSearchThatCannotFinishIsUncertain: when a search after
// an ambiguous failure gives up before reaching the rows older than the
// attempt (here a list whose every page is recent, up to the safety cap),
// the attempt's row may lie beyond where it looked. Submitting
// again could charge twice; the call reports that it does not know.
func TestCreateGenerationSearchThatCannotFinishIsUncertain(t *testing.T) {
	defer charge.SetMaxSearchPages(charge.SetMaxSearchPages(10))
	var posts, lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			posts.Add(1)
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		// Many newer rows of other arguments: every page is recent.
		n := lists.Add(1)
		now := time.Now().UTC().Format(time.RFC3339Nano)
		fmt.Fprintf(w, `{"generations":[{"id":"gen_%d","feature":"image/generation","params":{"prompt":"other"},"requestDate":%q}],"nextCursor":"c%d"}`, n, now, n)
	}))
	t.Cleanup(srv.Close)
	c, err := New("mg_key_for_retry_tests", WithBaseURL(srv.URL), WithRetryWait(time.Millisecond, 5*time.Millisecond))
	require.NoError(t, err)

	_, err = c.CreateGeneration(context.Background(), RawArgs{FeatureName: mediagen.FeatureImageGeneration, Values: map[string]any{"prompt": "p"}})
	var uncertain *UncertainError
	require.ErrorAs(t, err, &uncertain)
	assert.EqualValues(t, 1, posts.Load(), "not submitted again while the first attempt's row may exist")
	assert.EqualValues(t, 10, lists.Load())
}

// TestCreateGenerationSearchWaitsForALateRow: a gateway answers 504 while the
// service is still storing the generation it accepted. The search must give
// the row time to show before concluding there is none and charging again.
func TestCreateGenerationSearchWaitsForALateRow(t *testing.T) {
	var posts atomic.Int32
	var stored atomic.Pointer[string]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			posts.Add(1)
			row := fmt.Sprintf(`{"id":"gen_late","feature":"image/generation","params":{"prompt":"p"},"requestDate":%q}`,
				time.Now().UTC().Format(time.RFC3339Nano))
			time.AfterFunc(10*time.Millisecond, func() { stored.Store(&row) })
			w.WriteHeader(http.StatusGatewayTimeout)
			return
		}
		rows := ""
		if p := stored.Load(); p != nil {
			rows = *p
		}
		fmt.Fprintf(w, `{"generations":[%s],"nextCursor":null}`, rows)
	}))
	t.Cleanup(srv.Close)
	c, err := New("mg_key_for_retry_tests", WithBaseURL(srv.URL), WithRetryWait(100*time.Millisecond, 200*time.Millisecond))
	require.NoError(t, err)

	g, err := c.CreateGeneration(context.Background(), RawArgs{FeatureName: mediagen.FeatureImageGeneration, Values: map[string]any{"prompt": "p"}})
	require.NoError(t, err)
	assert.Equal(t, "gen_late", g.ID)
	assert.EqualValues(t, 1, posts.Load(), "found, not submitted again")
}

// TestCreateGenerationAnswerWithoutIDIsAmbiguous: a 2xx that names no
// generation (an empty body from a proxy) leaves the caller nothing to
// follow although the service may have charged; the client looks for the
// row instead of handing back an empty generation.
func TestCreateGenerationAnswerWithoutIDIsAmbiguous(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			posts.Add(1)
			_, _ = w.Write([]byte(`{}`))
			return
		}
		fmt.Fprintf(w, `{"generations":[{"id":"gen_1","feature":"image/generation","params":{"prompt":"p"},"requestDate":%q}],"nextCursor":null}`,
			time.Now().UTC().Format(time.RFC3339Nano))
	}))
	t.Cleanup(srv.Close)
	c, err := New("mg_key_for_retry_tests", WithBaseURL(srv.URL), WithRetryWait(time.Millisecond, 5*time.Millisecond))
	require.NoError(t, err)

	g, err := c.CreateGeneration(context.Background(), RawArgs{FeatureName: mediagen.FeatureImageGeneration, Values: map[string]any{"prompt": "p"}})
	require.NoError(t, err)
	assert.Equal(t, "gen_1", g.ID)
	assert.EqualValues(t, 1, posts.Load())
}

// Reads are retried on 500 as on 502-504: a listing with many retries does
// not fail on the first transient 500. A charging call is not resent on 500:
// it may have been accepted (the reconcile search decides).
func TestReadsAreRetriedOn500(t *testing.T) {
	ctx := context.Background()
	s := &scripted{statuses: []int{500, 500, 200}, body: `{"generations":[],"nextCursor":null}`}
	c := newScripted(t, s, WithMaxRetries(20))
	_, err := c.ListGenerations(ctx, ListParams{})
	require.NoError(t, err)
	assert.EqualValues(t, 3, s.n.Load())

	s = &scripted{statuses: []int{500, 200}, body: `{"success":true}`}
	c = newScripted(t, s)
	require.NoError(t, c.DeleteGeneration(ctx, "gen_1"))
	assert.EqualValues(t, 2, s.n.Load())

	s = &scripted{statuses: []int{500}}
	c = newScripted(t, s, WithMaxRetries(2))
	_, err = c.GetGeneration(ctx, "gen_1")
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 500, apiErr.StatusCode, "the last answer when the retries run out")
	assert.EqualValues(t, 3, s.n.Load())
}
