package engine

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/retry"
)

// fakeClock moves when slept on and records the waits.
type fakeClock struct {
	now   time.Time
	waits []time.Duration
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

// scripted answers each request with the next status of its script.
func scripted(t *testing.T, statuses ...int) (*url.URL, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		code := statuses[min(i, len(statuses)-1)]
		if code == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "3")
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL + "/v3/x")
	require.NoError(t, err)
	return u, &n
}

func testCall(clk *fakeClock) *Call {
	return &Call{Retry: retry.Policy{MaxRetries: 4, WaitMin: time.Second, WaitMax: 10 * time.Second},
		UserAgent: []string{"test"}, Logger: slog.New(slog.DiscardHandler), Clock: clk, Timeout: time.Minute}
}

// TestRetriesWaitOnTheCallsClock: backoffs and Retry-After are waited on
// the call's clock, so a test clock advances instead of sleeping, and the
// answer that is not retried reaches handle.
func TestRetriesWaitOnTheCallsClock(t *testing.T) {
	u, n := scripted(t, 503, 429, 200)
	clk := &fakeClock{now: time.Unix(1e9, 0)}
	e := New(&http.Client{}, "key-123456", nil)
	var body string
	err := e.Do(t.Context(), testCall(clk), &Request{Method: http.MethodGet, URL: *u}, func(resp *http.Response) error {
		b, err := io.ReadAll(resp.Body)
		body = string(b)
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, int32(3), n.Load())
	assert.Equal(t, "key-123456", body, "the key goes to the API")
	require.Len(t, clk.waits, 2)
	assert.Equal(t, 3*time.Second, clk.waits[1], "Retry-After read on the call's clock")
}

func TestChargingRequestIsNotResentAfterA5xx(t *testing.T) {
	u, n := scripted(t, 502, 200)
	clk := &fakeClock{}
	r := &Request{Method: http.MethodPost, URL: *u, Body: []byte(`{}`), Class: Charging}
	var status int
	err := New(&http.Client{}, "key-123456", nil).Do(t.Context(), testCall(clk), r, func(resp *http.Response) error {
		status = resp.StatusCode
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadGateway, status, "handle reads the 502: the caller reconciles")
	assert.Equal(t, int32(1), n.Load())
}

func TestRetriesStopAtMaxWithTheLastAnswer(t *testing.T) {
	u, n := scripted(t, 503)
	clk := &fakeClock{}
	call := testCall(clk)
	call.Retry.MaxRetries = 2
	r := &Request{Method: http.MethodDelete, URL: *u}
	var status int
	err := New(&http.Client{}, "key-123456", nil).Do(t.Context(), call, r, func(resp *http.Response) error {
		status = resp.StatusCode
		return errors.New("answered 503")
	})
	require.EqualError(t, err, "answered 503")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, int32(3), n.Load())
	assert.True(t, r.Acted, "a retried 5xx may have acted")
}

func TestRefusingMiddlewareIsFinal(t *testing.T) {
	u, n := scripted(t, 200)
	call := testCall(&fakeClock{})
	call.Middleware = []Middleware{func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		return nil, errors.New("not today")
	}}
	err := New(&http.Client{}, "key-123456", nil).Do(t.Context(), call, &Request{Method: http.MethodGet, URL: *u},
		func(*http.Response) error { return nil })
	var se *SendError
	require.ErrorAs(t, err, &se)
	assert.True(t, refused(se.Err))
	assert.False(t, se.MaybeSent)
	assert.Zero(t, n.Load())
}

// A middleware that returns neither a response nor an error fails the
// call: before it sent, as refusing; after, as an answer lost (a charging
// request may have been sent).
func TestMiddlewareWithoutAnswerFails(t *testing.T) {
	for _, sends := range []bool{false, true} {
		u, n := scripted(t, 200)
		call := testCall(&fakeClock{})
		call.Middleware = []Middleware{func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			if sends {
				resp, err := next(req)
				if err == nil {
					_ = resp.Body.Close()
				}
			}
			return nil, nil
		}}
		r := &Request{Method: http.MethodPost, URL: *u, Body: []byte(`{}`), Class: Charging}
		err := New(&http.Client{}, "key-123456", nil).Do(t.Context(), call, r, func(*http.Response) error { return nil })
		var se *SendError
		require.ErrorAs(t, err, &se, "sends %v", sends)
		assert.ErrorIs(t, err, errNoAnswer)
		assert.Equal(t, sends, se.MaybeSent, "sends %v", sends)
		assert.Equal(t, int32(map[bool]int{false: 0, true: 1}[sends]), n.Load(), "never resent")
	}
}

func TestStorageRequestsCarryNoKey(t *testing.T) {
	u, _ := scripted(t, 200)
	var body string
	err := New(&http.Client{}, "key-123456", nil).Do(t.Context(), testCall(&fakeClock{}), &Request{Method: http.MethodGet, URL: *u, Storage: true},
		func(resp *http.Response) error {
			b, err := io.ReadAll(resp.Body)
			body = string(b)
			return err
		})
	require.NoError(t, err)
	assert.Empty(t, body)
}

// TestAttemptTimeout: an attempt past the call's timeout is cut, reported
// as a timeout, and retried; the next attempt gets a bound of its own.
func TestAttemptTimeout(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			<-r.Context().Done() // the first attempt hangs until cut
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	clk := &fakeClock{}
	call := testCall(clk)
	call.Timeout = 50 * time.Millisecond
	e := New(&http.Client{}, "key-123456", nil)
	var body string
	err = e.Do(t.Context(), call, &Request{Method: http.MethodGet, URL: *u}, func(resp *http.Response) error {
		b, err := io.ReadAll(resp.Body)
		body = string(b)
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, "ok", body)
	assert.Equal(t, int32(2), n.Load())

	call.Retry.MaxRetries = 0
	n.Store(0)
	err = e.Do(t.Context(), call, &Request{Method: http.MethodGet, URL: *u}, func(*http.Response) error { return nil })
	var se *SendError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	var te interface{ Timeout() bool }
	require.ErrorAs(t, err, &te)
	assert.True(t, te.Timeout())

	e.watch.mu.Lock()
	defer e.watch.mu.Unlock()
	assert.Len(t, e.watch.free, len(e.watch.slots), "every attempt's bound was released")
}

// TestWatchdogFiresInOrder: bounds registered out of order each fire at
// their own time.
func TestWatchdogFiresInOrder(t *testing.T) {
	var w watchdog
	long := w.watch(context.Background(), time.Hour)
	short := w.watch(context.Background(), 20*time.Millisecond)
	<-short.ctx.Done()
	assert.True(t, short.timedOut())
	assert.False(t, long.timedOut())
	assert.NoError(t, long.ctx.Err())
	w.release(short)
	w.release(long)
	assert.ErrorIs(t, long.ctx.Err(), context.Canceled)
	assert.False(t, long.timedOut(), "released, not timed out")
}

// TestRedirectsKeepTheKeyHome: a redirect to another origin (here the same
// host on another port) is not followed, so the key never reaches it; a
// POST follows no redirect at all, and its redirect is a refusal, not an
// ambiguous failure; a GET within the origin is followed.
func TestRedirectsKeepTheKeyHome(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		_, _ = io.WriteString(w, `{"generation":{"id":"not_yours"}}`)
	}))
	t.Cleanup(other.Close)
	var home atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		home.Add(1)
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/v3/generations/x", http.StatusTemporaryRedirect)
		case "/create":
			http.Redirect(w, r, "/created", http.StatusFound)
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusMovedPermanently)
		default:
			_, _ = io.WriteString(w, "home")
		}
	}))
	t.Cleanup(srv.Close)
	e := New(&http.Client{}, "key-123456", nil)
	do := func(method, path string, class Class, body []byte) (string, error) {
		u, err := url.Parse(srv.URL + path)
		require.NoError(t, err)
		var got string
		err = e.Do(t.Context(), testCall(&fakeClock{}), &Request{Method: method, URL: *u, Class: class, Body: body}, func(resp *http.Response) error {
			b, err := io.ReadAll(resp.Body)
			got = string(b)
			return err
		})
		return got, err
	}

	_, err := do(http.MethodGet, "/away", Safe, nil)
	var re *RedirectError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, err.Error(), "the API key stays")
	assert.Zero(t, elsewhere.Load(), "nothing, and no key, reached the other origin")

	home.Store(0)
	_, err = do(http.MethodPost, "/create", Charging, []byte(`{}`))
	require.ErrorAs(t, err, &re)
	var se *SendError
	require.ErrorAs(t, err, &se)
	assert.False(t, se.MaybeSent, "a redirect is an answer: nothing was accepted")
	assert.Equal(t, int32(1), home.Load(), "not resent, not followed")

	got, err := do(http.MethodGet, "/moved", Safe, nil)
	require.NoError(t, err)
	assert.Equal(t, "home", got)
}

// A server whose malformed answer quotes the key, which net/http's error
// then carries, gets it printed nowhere.
func TestTransportErrorsDoNotCarryTheKey(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			_, _ = conn.Read(buf)
			_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nBad Header key-123456\r\n\r\nok")
			_ = conn.Close()
		}
	}()
	u, err := url.Parse("http://" + ln.Addr().String() + "/v3/x")
	require.NoError(t, err)
	call := testCall(&fakeClock{})
	call.Retry.MaxRetries = 0
	err = New(&http.Client{}, "key-123456", nil).Do(t.Context(), call, &Request{Method: http.MethodGet, URL: *u}, func(*http.Response) error { return nil })
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "key-123456")
}
