package webhook_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/webhook"
)

const handlerSecret = "whsec_handler_1"

var handlerNow = time.Unix(1763719200, 0)

func generationBody(name webhook.EventName, id string) []byte {
	return fmt.Appendf(nil, `{"event":%q,"generation":{"id":%q,"projectId":"prj_1","feature":"image/generation","kind":"image","status":"done","params":{},"balanceUsed":0.04,"requestDate":"2025-11-21T10:00:00Z"}}`, name, id)
}

func voiceBody(name webhook.EventName, id string) []byte {
	return fmt.Appendf(nil, `{"event":%q,"voice":{"id":%q,"owner":"project","name":"Narrator","status":"done"}}`, name, id)
}

// delivery is a POST signed with secrets at at, as the service sends it.
func delivery(body []byte, at time.Time, secrets ...string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	webhook.SetHeaders(req.Header, secrets, at, body)
	return req
}

func serve(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// reported collects what Handler reports through WithErrorFunc.
type reported struct {
	mu   sync.Mutex
	errs []error
	evs  []*webhook.Event
}

func (r *reported) option() webhook.Option {
	return webhook.WithErrorFunc(func(_ context.Context, ev *webhook.Event, err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.errs = append(r.errs, err)
		r.evs = append(r.evs, ev)
	})
}

func (r *reported) all() ([]error, []*webhook.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...), append([]*webhook.Event(nil), r.evs...)
}

func (r *reported) count() int {
	errs, _ := r.all()
	return len(errs)
}

// counter is a callback that records the events it gets and returns what
// next says.
type counter struct {
	mu   sync.Mutex
	evs  []*webhook.Event
	next func(context.Context, *webhook.Event) error
}

func (c *counter) fn(ctx context.Context, ev *webhook.Event) error {
	c.mu.Lock()
	c.evs = append(c.evs, ev)
	next := c.next
	c.mu.Unlock()
	if next != nil {
		return next(ctx, ev)
	}
	return nil
}

func (c *counter) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.evs)
}

func newHandler(tb testing.TB, c *counter, rep *reported, opts ...webhook.Option) http.Handler {
	base := []webhook.Option{webhook.WithNow(func() time.Time { return handlerNow }), rep.option()}
	return handlerOf(tb, handlerSecret, c.fn, append(base, opts...)...)
}

// handlerOf is webhook.Handler with options the test means to be valid.
func handlerOf(tb testing.TB, secret string, fn func(context.Context, *webhook.Event) error, opts ...webhook.Option) http.Handler {
	tb.Helper()
	h, err := webhook.Handler(secret, fn, opts...)
	require.NoError(tb, err)
	return h
}

func TestHandlerCallsFnWithEvent(t *testing.T) {
	c, rep := &counter{}, &reported{}
	type key struct{}
	var fnCtx context.Context
	c.next = func(ctx context.Context, _ *webhook.Event) error { fnCtx = ctx; return nil }
	h := newHandler(t, c, rep)

	req := delivery(generationBody(webhook.EventGenerationDone, "gen_1"), handlerNow, handlerSecret)
	req = req.WithContext(context.WithValue(req.Context(), key{}, "request value"))
	rec := serve(h, req)

	assert.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, 1, c.calls())
	ev := c.evs[0]
	assert.Equal(t, webhook.EventGenerationDone, ev.Name)
	require.NotNil(t, ev.Generation)
	assert.Equal(t, "gen_1", ev.Generation.ID)
	assert.Equal(t, "request value", fnCtx.Value(key{}), "the callback sees the request's values")
	assert.Zero(t, rep.count())
}

func TestHandlerRefuses(t *testing.T) {
	body := generationBody(webhook.EventGenerationDone, "gen_1")
	expected := webhook.Sign(handlerSecret, handlerNow, body)
	tests := []struct {
		name     string
		req      func() *http.Request
		want     int
		wantErr  error
		reported bool
	}{
		{name: "GET", want: http.StatusMethodNotAllowed, req: func() *http.Request {
			r := delivery(body, handlerNow, handlerSecret)
			r.Method = http.MethodGet
			return r
		}},
		{name: "PUT", want: http.StatusMethodNotAllowed, req: func() *http.Request {
			r := delivery(body, handlerNow, handlerSecret)
			r.Method = http.MethodPut
			return r
		}},
		{name: "unsigned", want: http.StatusUnauthorized, wantErr: webhook.ErrMissingHeader, req: func() *http.Request {
			return httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
		}},
		{name: "signed with another secret", want: http.StatusUnauthorized, wantErr: webhook.ErrNoValidSignature, req: func() *http.Request {
			return delivery(body, handlerNow, "whsec_attacker")
		}},
		{name: "tampered body", want: http.StatusUnauthorized, wantErr: webhook.ErrNoValidSignature, req: func() *http.Request {
			r := delivery(body, handlerNow, handlerSecret)
			r.Body = io.NopCloser(bytes.NewReader(generationBody(webhook.EventGenerationDone, "gen_2")))
			return r
		}},
		{name: "replayed after the tolerance", want: http.StatusUnauthorized, wantErr: webhook.ErrTimestampTooOld, req: func() *http.Request {
			return delivery(body, handlerNow.Add(-6*time.Minute), handlerSecret)
		}},
		{name: "signed in the future", want: http.StatusUnauthorized, wantErr: webhook.ErrTimestampInFuture, req: func() *http.Request {
			return delivery(body, handlerNow.Add(6*time.Minute), handlerSecret)
		}},
		{name: "garbled timestamp", want: http.StatusUnauthorized, wantErr: webhook.ErrInvalidTimestamp, req: func() *http.Request {
			r := delivery(body, handlerNow, handlerSecret)
			r.Header.Set(webhook.HeaderTimestamp, "now")
			return r
		}},
		{name: "signed but not an event", want: http.StatusBadRequest, wantErr: webhook.ErrInvalidPayload, req: func() *http.Request {
			return delivery([]byte(`{"event":"generation.done"}`), handlerNow, handlerSecret)
		}},
		{name: "too large", want: http.StatusRequestEntityTooLarge, req: func() *http.Request {
			big := append(append([]byte{}, body...), bytes.Repeat([]byte(" "), webhook.DefaultMaxBodyBytes)...)
			return delivery(big, handlerNow, handlerSecret)
		}, reported: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rep := &counter{}, &reported{}
			rec := serve(newHandler(t, c, rep), tt.req())

			assert.Equal(t, tt.want, rec.Code)
			assert.Equal(t, http.StatusText(tt.want)+"\n", rec.Body.String(), "the answer carries no detail")
			assert.NotContains(t, rec.Body.String(), strings.TrimPrefix(expected, "sha256="))
			assert.Zero(t, c.calls(), "the callback must not run")
			if tt.want == http.StatusMethodNotAllowed {
				assert.Equal(t, http.MethodPost, rec.Header().Get("Allow"))
			}
			errs, evs := rep.all()
			switch {
			case tt.wantErr != nil:
				require.Len(t, errs, 1)
				assert.ErrorIs(t, errs[0], tt.wantErr)
				assert.Nil(t, evs[0])
			case tt.reported:
				assert.Len(t, errs, 1)
			default:
				assert.Empty(t, errs)
			}
		})
	}
}

func TestHandlerBodyLimitBoundary(t *testing.T) {
	body := generationBody(webhook.EventGenerationDone, "gen_1")
	limit := int64(len(body) + 10)
	padded := func(n int64) []byte { // JSON allows trailing spaces
		return append(append([]byte{}, body...), bytes.Repeat([]byte(" "), int(n)-len(body))...)
	}
	c, rep := &counter{}, &reported{}
	h := newHandler(t, c, rep, webhook.WithMaxBodyBytes(limit))

	assert.Equal(t, http.StatusRequestEntityTooLarge, serve(h, delivery(padded(limit+1), handlerNow, handlerSecret)).Code)
	assert.Zero(t, c.calls())
	assert.Equal(t, http.StatusOK, serve(h, delivery(padded(limit), handlerNow, handlerSecret)).Code)
	assert.Equal(t, 1, c.calls())
}

// The largest cap, "no limit", takes a delivery: reading one byte past the cap
// overflowed and read nothing, so every signature failed (401).
func TestHandlerLargestBodyLimit(t *testing.T) {
	c, rep := &counter{}, &reported{}
	h := newHandler(t, c, rep, webhook.WithMaxBodyBytes(math.MaxInt64))
	body := generationBody(webhook.EventGenerationDone, "gen_1")
	assert.Equal(t, http.StatusOK, serve(h, delivery(body, handlerNow, handlerSecret)).Code)
	assert.Equal(t, 1, c.calls())
	assert.Zero(t, rep.count())
}

func TestHandlerDropsDuplicates(t *testing.T) {
	c, rep := &counter{}, &reported{}
	h := newHandler(t, c, rep)
	body := generationBody(webhook.EventGenerationDone, "gen_1")

	assert.Equal(t, http.StatusOK, serve(h, delivery(body, handlerNow, handlerSecret)).Code)
	// The service's retry comes 2 s later, signed again.
	assert.Equal(t, http.StatusOK, serve(h, delivery(body, handlerNow.Add(2*time.Second), handlerSecret)).Code)
	assert.Equal(t, 1, c.calls(), "a repeat is acknowledged without running the callback")

	// Same id in another event or another resource is not a repeat.
	assert.Equal(t, http.StatusOK, serve(h, delivery(generationBody("generation.archived", "gen_1"), handlerNow, handlerSecret)).Code)
	assert.Equal(t, http.StatusOK, serve(h, delivery(voiceBody(webhook.EventVoiceDone, "gen_1"), handlerNow, handlerSecret)).Code)
	assert.Equal(t, 3, c.calls())
	assert.Zero(t, rep.count())
}

func TestHandlerConcurrentDuplicates(t *testing.T) {
	c, rep := &counter{}, &reported{}
	h := newHandler(t, c, rep)
	body := voiceBody(webhook.EventVoiceError, "voc_1")
	var wg sync.WaitGroup
	codes := make([]int, 20)
	for i := range codes {
		wg.Go(func() { codes[i] = serve(h, delivery(body, handlerNow, handlerSecret)).Code })
	}
	wg.Wait()
	for _, code := range codes {
		assert.Equal(t, http.StatusOK, code)
	}
	assert.Equal(t, 1, c.calls())
}

func TestHandlerRetryAfterFailure(t *testing.T) {
	boom := errors.New("database unavailable")
	c, rep := &counter{}, &reported{}
	c.next = func(context.Context, *webhook.Event) error { return boom }
	h := newHandler(t, c, rep)
	body := generationBody(webhook.EventGenerationError, "gen_1")

	rec := serve(h, delivery(body, handlerNow, handlerSecret))
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.NotContains(t, rec.Body.String(), "database", "the failure is not echoed")
	errs, evs := rep.all()
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], boom)
	require.NotNil(t, evs[0])
	assert.Equal(t, "gen_1", evs[0].Generation.ID)

	c.next = nil
	assert.Equal(t, http.StatusOK, serve(h, delivery(body, handlerNow.Add(2*time.Second), handlerSecret)).Code, "the retry is processed")
	assert.Equal(t, http.StatusOK, serve(h, delivery(body, handlerNow.Add(3*time.Second), handlerSecret)).Code)
	assert.Equal(t, 2, c.calls(), "after a success, repeats are dropped again")
}

func TestHandlerRecoversPanic(t *testing.T) {
	c, rep := &counter{}, &reported{}
	c.next = func(context.Context, *webhook.Event) error { panic("nil map") }
	h := newHandler(t, c, rep)
	body := generationBody(webhook.EventGenerationDone, "gen_1")

	assert.Equal(t, http.StatusInternalServerError, serve(h, delivery(body, handlerNow, handlerSecret)).Code)
	errs, _ := rep.all()
	require.Len(t, errs, 1)
	assert.ErrorContains(t, errs[0], "panicked: nil map")

	c.next = nil
	assert.Equal(t, http.StatusOK, serve(h, delivery(body, handlerNow, handlerSecret)).Code)
	assert.Equal(t, 2, c.calls())
}

func TestHandlerAcknowledgesSlowCallback(t *testing.T) {
	release := make(chan error)
	var fnCtx atomic.Value
	c, rep := &counter{}, &reported{}
	c.next = func(ctx context.Context, _ *webhook.Event) error {
		fnCtx.Store(ctx)
		return <-release
	}
	h := newHandler(t, c, rep, webhook.WithAckTimeout(20*time.Millisecond))
	body := generationBody(webhook.EventGenerationDone, "gen_slow")

	reqCtx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	rec := serve(h, delivery(body, handlerNow, handlerSecret).WithContext(reqCtx))
	assert.Equal(t, http.StatusAccepted, rec.Code)
	assert.Less(t, time.Since(start), time.Second)

	cancel() // the service hangs up; acknowledged work goes on
	require.Eventually(t, func() bool { return fnCtx.Load() != nil }, time.Second, time.Millisecond)
	assert.NoError(t, fnCtx.Load().(context.Context).Err())

	// A resend while the first is still running is a repeat.
	assert.Equal(t, http.StatusOK, serve(h, delivery(body, handlerNow, handlerSecret)).Code)
	assert.Equal(t, 1, c.calls())

	// The late failure is reported and the id forgotten.
	release <- errors.New("late failure")
	require.Eventually(t, func() bool { return rep.count() == 1 }, time.Second, time.Millisecond)
	errs, evs := rep.all()
	assert.ErrorContains(t, errs[0], "late failure")
	assert.Equal(t, "gen_slow", evs[0].Generation.ID)

	c.next = nil
	assert.Equal(t, http.StatusOK, serve(h, delivery(body, handlerNow, handlerSecret)).Code)
	assert.Equal(t, 2, c.calls())
}

func TestHandlerAsync(t *testing.T) {
	release := make(chan struct{})
	c, rep := &counter{}, &reported{}
	c.next = func(_ context.Context, ev *webhook.Event) error {
		<-release
		if ev.Generation.ID == "gen_bad" {
			return errors.New("cannot store")
		}
		return nil
	}
	h := newHandler(t, c, rep, webhook.WithAsync(1, 1))
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})

	// One runs, one waits, the third finds the pool full.
	assert.Equal(t, http.StatusAccepted, serve(h, delivery(generationBody(webhook.EventGenerationDone, "gen_1"), handlerNow, handlerSecret)).Code)
	require.Eventually(t, func() bool { return c.calls() == 1 }, time.Second, time.Millisecond)
	assert.Equal(t, http.StatusAccepted, serve(h, delivery(generationBody(webhook.EventGenerationDone, "gen_bad"), handlerNow, handlerSecret)).Code)
	full := generationBody(webhook.EventGenerationDone, "gen_3")
	rec := serve(h, delivery(full, handlerNow, handlerSecret))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, http.StatusText(http.StatusServiceUnavailable)+"\n", rec.Body.String())
	errs, _ := rep.all()
	require.Len(t, errs, 1)
	assert.ErrorContains(t, errs[0], "queue full")

	close(release)
	require.Eventually(t, func() bool { return c.calls() == 2 && rep.count() == 2 }, time.Second, time.Millisecond)
	errs, evs := rep.all()
	assert.ErrorContains(t, errs[1], "cannot store", "a failure after the acknowledgement goes to the error func")
	assert.Equal(t, "gen_bad", evs[1].Generation.ID)

	// The refused delivery was forgotten, so the service's retry is taken.
	require.Eventually(t, func() bool {
		return serve(h, delivery(full, handlerNow, handlerSecret)).Code == http.StatusAccepted
	}, time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return c.calls() == 3 }, time.Second, time.Millisecond)
	// So was the failed one.
	assert.Equal(t, http.StatusAccepted, serve(h, delivery(generationBody(webhook.EventGenerationDone, "gen_bad"), handlerNow, handlerSecret)).Code)
	require.Eventually(t, func() bool { return c.calls() == 4 }, time.Second, time.Millisecond)
}

func TestHandlerWithoutStore(t *testing.T) {
	c, rep := &counter{}, &reported{}
	h := newHandler(t, c, rep, webhook.WithStore(nil))
	body := generationBody(webhook.EventGenerationDone, "gen_1")
	for range 2 {
		assert.Equal(t, http.StatusOK, serve(h, delivery(body, handlerNow, handlerSecret)).Code)
	}
	assert.Equal(t, 2, c.calls())
}

// brokenStore fails every call.
type brokenStore struct{}

var errStoreDown = errors.New("store down")

func (brokenStore) Claim(context.Context, string) (bool, error) { return false, errStoreDown }
func (brokenStore) Release(context.Context, string) error       { return errStoreDown }

func TestHandlerStoreFailure(t *testing.T) {
	c, rep := &counter{}, &reported{}
	h := newHandler(t, c, rep, webhook.WithStore(brokenStore{}))

	rec := serve(h, delivery(generationBody(webhook.EventGenerationDone, "gen_1"), handlerNow, handlerSecret))
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Zero(t, c.calls(), "without the store a repeat cannot be told apart, so nothing runs")
	errs, evs := rep.all()
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], errStoreDown)
	assert.NotNil(t, evs[0])
}

func TestHandlerSharedStore(t *testing.T) {
	store := webhook.NewMemoryStore(100)
	c1, c2, rep := &counter{}, &counter{}, &reported{}
	replica1 := newHandler(t, c1, rep, webhook.WithStore(store))
	replica2 := newHandler(t, c2, rep, webhook.WithStore(store))
	body := voiceBody(webhook.EventVoiceDone, "voc_1")

	assert.Equal(t, http.StatusOK, serve(replica1, delivery(body, handlerNow, handlerSecret)).Code)
	assert.Equal(t, http.StatusOK, serve(replica2, delivery(body, handlerNow, handlerSecret)).Code)
	assert.Equal(t, 1, c1.calls()+c2.calls())
	assert.Equal(t, 1, store.Len())
}

func TestHandlerRotation(t *testing.T) {
	const oldSecret = "whsec_handler_0"
	c, rep := &counter{}, &reported{}
	h := newHandler(t, c, rep, webhook.WithSecrets(oldSecret))

	assert.Equal(t, http.StatusOK, serve(h, delivery(generationBody(webhook.EventGenerationDone, "gen_1"), handlerNow, oldSecret)).Code)
	assert.Equal(t, http.StatusOK, serve(h, delivery(generationBody(webhook.EventGenerationDone, "gen_2"), handlerNow, handlerSecret, oldSecret)).Code)
	assert.Equal(t, http.StatusOK, serve(h, delivery(generationBody(webhook.EventGenerationDone, "gen_3"), handlerNow, handlerSecret)).Code)
	assert.Equal(t, 3, c.calls())
}

func TestHandlerPassesUnknownEvents(t *testing.T) {
	c, rep := &counter{}, &reported{}
	h := newHandler(t, c, rep)
	body := []byte(`{"event":"project.updated","project":{"id":"prj_1"}}`)

	assert.Equal(t, http.StatusOK, serve(h, delivery(body, handlerNow, handlerSecret)).Code)
	assert.Equal(t, http.StatusOK, serve(h, delivery(body, handlerNow, handlerSecret)).Code)
	require.Equal(t, 2, c.calls(), "without a generation or voice id there is nothing to dedupe by")
	assert.Equal(t, webhook.EventName("project.updated"), c.evs[0].Name)
	assert.JSONEq(t, string(body), string(c.evs[0].Raw))
}

func TestHandlerRefusesMisuse(t *testing.T) {
	fn := func(context.Context, *webhook.Event) error { return nil }
	tests := []struct {
		name   string
		secret string
		fn     func(context.Context, *webhook.Event) error
		opts   []webhook.Option
		want   error
		say    string
	}{
		{"nil callback", "s", nil, nil, webhook.ErrInvalidOption, "webhook: invalid option: Handler: nil callback"},
		{"no secret", "", fn, nil, webhook.ErrNoSecret, webhook.ErrNoSecret.Error()},
		{"no workers", "s", fn, []webhook.Option{webhook.WithAsync(0, 10)}, webhook.ErrInvalidOption, "WithAsync(0, 10)"},
		{"negative queue", "s", fn, []webhook.Option{webhook.WithAsync(1, -1)}, webhook.ErrInvalidOption, "WithAsync(1, -1)"},
		{"zero ack timeout", "s", fn, []webhook.Option{webhook.WithAckTimeout(0)}, webhook.ErrInvalidOption, "WithAckTimeout(0s)"},
		{"zero read timeout", "s", fn, []webhook.Option{webhook.WithReadTimeout(0)}, webhook.ErrInvalidOption, "WithReadTimeout(0s)"},
		{"negative read timeout", "s", fn, []webhook.Option{webhook.WithReadTimeout(-time.Second)}, webhook.ErrInvalidOption, "WithReadTimeout(-1s)"},
		{"negative body cap", "s", fn, []webhook.Option{webhook.WithMaxBodyBytes(-1)}, webhook.ErrInvalidOption, "WithMaxBodyBytes(-1)"},
		{"nil error func", "s", fn, []webhook.Option{webhook.WithErrorFunc(nil)}, webhook.ErrInvalidOption, "WithErrorFunc(nil)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h http.Handler
			var err error
			require.NotPanics(t, func() { h, err = webhook.Handler(tt.secret, tt.fn, tt.opts...) })
			assert.Nil(t, h)
			require.ErrorIs(t, err, tt.want)
			assert.ErrorContains(t, err, tt.say)
		})
	}

	// Every mistake is reported at once.
	_, err := webhook.Handler("", nil, webhook.WithAckTimeout(0), webhook.WithErrorFunc(nil))
	joined, ok := err.(interface{ Unwrap() []error })
	require.True(t, ok, "the errors are joined: %v", err)
	assert.Len(t, joined.Unwrap(), 4, "each is reported: %v", err)
	for _, want := range []string{"nil callback", "WithAckTimeout(0s)", "WithErrorFunc(nil)", webhook.ErrNoSecret.Error()} {
		assert.ErrorContains(t, err, want)
	}
	assert.ErrorIs(t, err, webhook.ErrNoSecret)

	h, err := webhook.Handler("", fn, webhook.WithSecrets("s"), nil)
	require.NoError(t, err)
	assert.NotNil(t, h)
}

func TestHandlerOverHTTP(t *testing.T) {
	c, rep := &counter{}, &reported{}
	srv := httptest.NewServer(handlerOf(t, handlerSecret, c.fn, rep.option()))
	t.Cleanup(srv.Close)
	body := generationBody(webhook.EventGenerationTimeout, "gen_1")

	req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
	require.NoError(t, err)
	webhook.SetHeaders(req.Header, []string{handlerSecret}, time.Now(), body)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, 1, c.calls())
	assert.Equal(t, webhook.EventGenerationTimeout, c.evs[0].Name)

	resp, err = srv.Client().Get(srv.URL)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Zero(t, rep.count())
}

func TestHandlerLogsByDefault(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	c := &counter{next: func(context.Context, *webhook.Event) error { return errors.New("disk full") }}
	h := handlerOf(t, handlerSecret, c.fn, webhook.WithNow(func() time.Time { return handlerNow }))
	body := generationBody(webhook.EventGenerationDone, "gen_1")

	serve(h, delivery(body, handlerNow, "whsec_wrong"))
	serve(h, delivery(body, handlerNow, handlerSecret))

	out := logs.String()
	assert.Contains(t, out, "level=WARN")
	assert.Contains(t, out, "no valid signature")
	assert.Contains(t, out, "level=ERROR")
	assert.Contains(t, out, "disk full")
	assert.Contains(t, out, "gen_1")
	assert.NotContains(t, out, handlerSecret)
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func TestHandlerRefusesBeforeReadingBody(t *testing.T) {
	body := generationBody(webhook.EventGenerationDone, "gen_1")
	for name, header := range map[string]func(h http.Header){
		"unsigned":          func(h http.Header) { h.Del(webhook.HeaderSignature) },
		"stale":             func(h http.Header) { webhook.SetHeaders(h, []string{handlerSecret}, handlerNow.Add(-time.Hour), body) },
		"malformed entry":   func(h http.Header) { h.Set(webhook.HeaderSignature, "sha256=00") },
		"garbled timestamp": func(h http.Header) { h.Set(webhook.HeaderTimestamp, "soon") },
	} {
		t.Run(name, func(t *testing.T) {
			c, rep := &counter{}, &reported{}
			req := delivery(body, handlerNow, handlerSecret)
			header(req.Header)
			counting := &countingReader{r: bytes.NewReader(body)}
			req.Body = io.NopCloser(counting)

			assert.Equal(t, http.StatusUnauthorized, serve(newHandler(t, c, rep), req).Code)
			assert.Zero(t, counting.n.Load(), "the body of a refused request is not read")
			assert.Equal(t, 1, rep.count())
		})
	}
}

// stuckStore is a Store whose Claim returns only when its context ends or
// after delay, as a database that stopped answering does.
type stuckStore struct{ delay time.Duration }

func (s stuckStore) Claim(ctx context.Context, _ string) (bool, error) {
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-time.After(s.delay):
		return true, nil
	}
}

func (stuckStore) Release(context.Context, string) error { return nil }

// serveWithin serves req in the background and fails the test when no
// answer comes within limit.
func serveWithin(t *testing.T, h http.Handler, req *http.Request, limit time.Duration) *httptest.ResponseRecorder {
	t.Helper()
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- serve(h, req) }()
	select {
	case rec := <-done:
		return rec
	case <-time.After(limit):
		t.Fatalf("no answer within %v", limit)
		return nil
	}
}

func TestHandlerAnswersInTimeWhenStoreHangs(t *testing.T) {
	c, rep := &counter{}, &reported{}
	h := newHandler(t, c, rep, webhook.WithStore(stuckStore{delay: time.Hour}), webhook.WithAckTimeout(50*time.Millisecond))
	rec := serveWithin(t, h, delivery(generationBody(webhook.EventGenerationDone, "gen_1"), handlerNow, handlerSecret), 2*time.Second)
	assert.Equal(t, http.StatusInternalServerError, rec.Code, "without the store a repeat cannot be told apart; the service retries")
	assert.Zero(t, c.calls())
	errs, _ := rep.all()
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], context.DeadlineExceeded)
}

func TestHandlerAckTimeoutCountsFromTheRequest(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	c, rep := &counter{}, &reported{}
	c.next = func(context.Context, *webhook.Event) error { <-release; return nil }
	h := newHandler(t, c, rep, webhook.WithStore(stuckStore{delay: 300 * time.Millisecond}), webhook.WithAckTimeout(500*time.Millisecond))
	start := time.Now()
	rec := serveWithin(t, h, delivery(generationBody(webhook.EventGenerationDone, "gen_1"), handlerNow, handlerSecret), 5*time.Second)
	assert.Equal(t, http.StatusAccepted, rec.Code)
	assert.Less(t, time.Since(start), 750*time.Millisecond, "the slow store's 300 ms count against the 500 ms")
}

func TestHandlerRefusesDeclaredOversizeBeforeReading(t *testing.T) {
	body := generationBody(webhook.EventGenerationDone, "gen_1")
	c, rep := &counter{}, &reported{}
	req := delivery(body, handlerNow, handlerSecret)
	counting := &countingReader{r: bytes.NewReader(body)}
	req.Body = io.NopCloser(counting)
	req.ContentLength = 1 << 30
	assert.Equal(t, http.StatusRequestEntityTooLarge, serve(newHandler(t, c, rep), req).Code)
	assert.Zero(t, counting.n.Load(), "a body declared too large is not read")
	assert.Zero(t, c.calls())
}
