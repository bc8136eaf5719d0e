package webhook_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/webhook"
)

// trickle feeds body into a pipe a byte every gap, as a slow sender does,
// until the body ends or the test does; sent reports whether it all went.
func trickle(t *testing.T, body []byte, gap time.Duration) (r io.Reader, sent *atomic.Bool) {
	t.Helper()
	pr, pw := io.Pipe()
	sent = new(atomic.Bool)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); _ = pr.Close() })
	go func() {
		for _, b := range body {
			select {
			case <-stop:
				return
			case <-time.After(gap):
			}
			if _, err := pw.Write([]byte{b}); err != nil {
				return
			}
		}
		sent.Store(true)
		_ = pw.Close()
	}()
	return pr, sent
}

// hideController wraps a ResponseWriter without Unwrap, as some middleware
// does: http.ResponseController cannot set a read deadline through it.
type hideController struct{ http.ResponseWriter }

func TestHandlerSlowSenderOverHTTP(t *testing.T) {
	const bound = 200 * time.Millisecond
	for name, wrap := range map[string]func(http.Handler) http.Handler{
		"server deadline": func(h http.Handler) http.Handler { return h },
		"no deadline support": func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(hideController{w}, r) })
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, rep := &counter{}, &reported{}
			srv := httptest.NewServer(wrap(handlerOf(t, handlerSecret, c.fn, rep.option(), webhook.WithReadTimeout(bound))))
			t.Cleanup(srv.Close)
			body := generationBody(webhook.EventGenerationDone, "gen_slow")

			// A byte every 10 ms: about 2.5 s for the whole body.
			slow, sent := trickle(t, body, 10*time.Millisecond)
			req, err := http.NewRequest(http.MethodPost, srv.URL, slow)
			require.NoError(t, err)
			req.ContentLength = int64(len(body))
			webhook.SetHeaders(req.Header, []string{handlerSecret}, time.Now(), body)
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())

			assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
			assert.False(t, sent.Load(), "the answer comes while the sender is still sending")
			assert.True(t, resp.Close, "the connection is not kept for the rest of the body")
			assert.Zero(t, c.calls(), "the callback must not run")
			errs, evs := rep.all()
			require.Len(t, errs, 1)
			assert.ErrorIs(t, errs[0], os.ErrDeadlineExceeded)
			assert.Nil(t, evs[0])
		})
	}
}

func TestHandlerStalledBodyWithoutServer(t *testing.T) {
	// A recorder has no connection to set a deadline on, and the body
	// never ends: only the handler's own bound can answer.
	c, rep := &counter{}, &reported{}
	h := newHandler(t, c, rep, webhook.WithReadTimeout(100*time.Millisecond))
	body := generationBody(webhook.EventGenerationDone, "gen_1")
	pr, pw := io.Pipe()
	t.Cleanup(func() { _ = pw.Close() })
	go func() { _, _ = pw.Write(body[:10]) }()
	req := delivery(body, handlerNow, handlerSecret)
	req.Body = pr

	rec := serveWithin(t, h, req, 2*time.Second)
	assert.Equal(t, http.StatusRequestTimeout, rec.Code)
	assert.Equal(t, http.StatusText(http.StatusRequestTimeout)+"\n", rec.Body.String())
	assert.Zero(t, c.calls())
	errs, _ := rep.all()
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], os.ErrDeadlineExceeded)
}

func TestHandlerBodyEndsEarly(t *testing.T) {
	c, rep := &counter{}, &reported{}
	req := delivery(generationBody(webhook.EventGenerationDone, "gen_1"), handlerNow, handlerSecret)
	req.Body = io.NopCloser(iotest.ErrReader(io.ErrUnexpectedEOF))
	rec := serve(newHandler(t, c, rep, webhook.WithReadTimeout(time.Second)), req)
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Zero(t, c.calls())
	errs, _ := rep.all()
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], io.ErrUnexpectedEOF)
}

// slowClaimStore takes delay to claim, then reports whether its context
// ended meanwhile.
type slowClaimStore struct{ delay time.Duration }

func (s slowClaimStore) Claim(ctx context.Context, _ string) (bool, error) {
	time.Sleep(s.delay)
	return ctx.Err() == nil, ctx.Err()
}

func (slowClaimStore) Release(context.Context, string) error { return nil }

func TestHandlerReadTimeoutEndsWithTheBody(t *testing.T) {
	// The bound is on reading only: a body read in time is processed even
	// when the store takes longer than the bound.
	c, rep := &counter{}, &reported{}
	h := handlerOf(t, handlerSecret, c.fn, rep.option(),
		webhook.WithReadTimeout(50*time.Millisecond), webhook.WithStore(slowClaimStore{delay: 300 * time.Millisecond}))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	body := generationBody(webhook.EventGenerationDone, "gen_1")

	req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
	require.NoError(t, err)
	webhook.SetHeaders(req.Header, []string{handlerSecret}, time.Now(), body)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 1, c.calls())
	assert.Zero(t, rep.count())
}
