package client

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
)

func TestCheckRetry(t *testing.T) {
	p := retryPolicy{waitMax: 5 * time.Second, clock: wallClock{}}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	refused := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	status := func(code int, retryAfter string) *http.Response {
		h := http.Header{}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		return &http.Response{StatusCode: code, Header: h}
	}
	cases := []struct {
		name  string
		class callClass
		sent  bool
		resp  *http.Response
		err   error
		retry bool
	}{
		{"safe: connection reset", classSafe, true, nil, reset, true},
		{"safe: refused", classSafe, false, nil, refused, true},
		{"safe: 429", classSafe, true, status(429, ""), nil, true},
		{"safe: 502", classSafe, true, status(502, ""), nil, true},
		{"safe: 503", classSafe, true, status(503, "1"), nil, true},
		{"safe: 504", classSafe, true, status(504, ""), nil, true},
		{"safe: 500", classSafe, true, status(500, ""), nil, true},
		{"safe: 501 is not retried", classSafe, true, status(501, ""), nil, false},
		{"safe: 404", classSafe, true, status(404, ""), nil, false},
		{"safe: 200", classSafe, true, status(200, ""), nil, false},
		{"safe: Retry-After beyond the max wait", classSafe, true, status(429, "60"), nil, false},
		{"safe: bad certificate", classSafe, true, nil, &url.Error{Op: "Get", URL: "https://x", Err: x509.UnknownAuthorityError{}}, false},
		{"safe: unsupported scheme", classSafe, false, nil, &url.Error{Op: "Get", URL: "ftp://x", Err: errors.New("unsupported protocol scheme \"ftp\"")}, false},
		{"charging: never sent", classCharging, false, nil, refused, true},
		{"charging: reset after sending", classCharging, true, nil, reset, false},
		{"charging: 429", classCharging, true, status(429, "0"), nil, true},
		{"charging: 500", classCharging, true, status(500, ""), nil, false},
		{"charging: 502", classCharging, true, status(502, ""), nil, false},
		{"charging: 503", classCharging, true, status(503, ""), nil, false},
		{"charging: 504", classCharging, true, status(504, ""), nil, false},
		{"charging: 400", classCharging, true, status(400, ""), nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, st := withCall(context.Background(), tc.class)
			st.sent.Store(tc.sent)
			retry, err := p.CheckRetry(ctx, tc.resp, tc.err)
			require.NoError(t, err)
			assert.Equal(t, tc.retry, retry)
		})
	}
	t.Run("a retried attempt that may have acted is remembered", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			sent  bool
			resp  *http.Response
			err   error
			acted bool
		}{
			{"reset after sending", true, nil, reset, true},
			{"never sent", false, nil, refused, false},
			{"gateway", true, status(502, ""), nil, true},
			{"rate limited", true, status(429, ""), nil, false},
		} {
			ctx, st := withCall(context.Background(), classSafe)
			st.sent.Store(tc.sent)
			retry, err := p.CheckRetry(ctx, tc.resp, tc.err)
			require.NoError(t, err)
			require.True(t, retry, tc.name)
			assert.Equal(t, tc.acted, st.acted.Load(), tc.name)
		}
	})
	t.Run("context ended", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		retry, err := p.CheckRetry(ctx, nil, reset)
		assert.False(t, retry)
		assert.ErrorIs(t, err, context.Canceled)
	})
}

func TestBackoff(t *testing.T) {
	p := retryPolicy{clock: wallClock{}}
	min, max := 100*time.Millisecond, 2*time.Second
	withRetryAfter := func(v string) *http.Response {
		return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {v}}}
	}
	for _, tc := range []struct {
		name     string
		attempt  int
		resp     *http.Response
		low, top time.Duration
	}{
		{"first retry", 0, nil, 50 * time.Millisecond, 100 * time.Millisecond},
		{"doubles", 1, nil, 100 * time.Millisecond, 200 * time.Millisecond},
		{"doubles again", 3, nil, 400 * time.Millisecond, 800 * time.Millisecond},
		{"capped at max", 10, nil, time.Second, 2 * time.Second},
		{"no overflow", 200, nil, time.Second, 2 * time.Second},
		{"Retry-After seconds", 0, withRetryAfter("1"), time.Second, time.Second},
		{"Retry-After zero", 4, withRetryAfter("0"), 0, 0},
		{"unparsable Retry-After ignored", 0, withRetryAfter("soon"), 50 * time.Millisecond, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 50 {
				d := p.Backoff(min, max, tc.attempt, tc.resp)
				assert.GreaterOrEqual(t, d, tc.low)
				assert.LessOrEqual(t, d, tc.top)
			}
		})
	}
}

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
	s := &scripted{statuses: []int{503}, header: http.Header{"Retry-After": {"2"}}}
	c := newScripted(t, s, WithRetryWait(time.Millisecond, 10*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.GetGeneration(ctx, "gen_1")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), time.Second, "the 2 s Retry-After wait was cut short")
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

// TestCheckRetryTrustsOnlyWhatTheTransportReports covers transports that do
// not report their progress through httptrace (a test double, a wrapper that
// starts a fresh context, an HTTP/3 transport): for them a missing GotConn
// proves nothing, and only a failed dial or lookup shows the request never
// left.
func TestCheckRetryTrustsOnlyWhatTheTransportReports(t *testing.T) {
	p := retryPolicy{waitMax: 5 * time.Second, clock: wallClock{}}
	reset := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
	refused := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	lookup := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "x"}}}
	handshake := &url.Error{Op: "Post", URL: "https://x", Err: errors.New("net/http: TLS handshake timeout")}
	for _, tc := range []struct {
		name         string
		traced, sent bool
		err          error
		retry        bool
	}{
		{"untraced: reset may come after sending", false, false, reset, false},
		{"untraced: refused dial", false, false, refused, true},
		{"untraced: failed lookup", false, false, lookup, true},
		{"untraced: other failure", false, false, handshake, false},
		{"traced: no connection yet", true, false, handshake, true},
		{"traced: reset after getting a connection", true, true, reset, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, st := withCall(context.Background(), classCharging)
			st.traced.Store(tc.traced)
			st.sent.Store(tc.sent)
			retry, err := p.CheckRetry(ctx, nil, tc.err)
			require.NoError(t, err)
			assert.Equal(t, tc.retry, retry)
			assert.Equal(t, !tc.retry, ambiguous(tc.err, st), "not resent means searched for")
		})
	}
}

// TestCreateGenerationSearchThatCannotFinishIsUncertain: when a search after
// an ambiguous failure gives up before reaching the rows older than the
// attempt (here a list whose every page is recent, up to the safety cap),
// the attempt's row may lie beyond where it looked. Submitting
// again could charge twice; the call reports that it does not know.
func TestCreateGenerationSearchThatCannotFinishIsUncertain(t *testing.T) {
	defer func(n int) { maxSearchPages = n }(maxSearchPages)
	maxSearchPages = 10
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
	assert.EqualValues(t, maxSearchPages, lists.Load())
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
