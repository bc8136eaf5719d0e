package refserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/feature"
	"github.com/mediagen/mediagen-go/internal/refserver/delivery"
	"github.com/mediagen/mediagen-go/webhook"
)

// Short delivery delays, so retries and drops happen within a test.
const (
	testAckTimeout = 300 * time.Millisecond
	testRetryDelay = 150 * time.Millisecond
)

// received is one delivery attempt as a receiver saw it.
type received struct {
	body   []byte
	header http.Header
	at     time.Time
}

// receiver is a webhook endpoint on httptest. answer picks the status of
// the nth attempt (1-based); 0 means never answer.
type receiver struct {
	t      *testing.T
	ts     *httptest.Server
	answer func(n int) int
	quit   chan struct{}

	mu  sync.Mutex
	got []received
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	t.Helper()
	rv := &receiver{t: t, answer: answer, quit: make(chan struct{})}
	rv.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		assert.NoError(t, err)
		rv.mu.Lock()
		rv.got = append(rv.got, received{body: b, header: r.Header.Clone(), at: time.Now()})
		n := len(rv.got)
		rv.mu.Unlock()
		status := http.StatusOK
		if rv.answer != nil {
			status = rv.answer(n)
		}
		if status == 0 {
			// Hang until the sender gives up or the test ends.
			select {
			case <-r.Context().Done():
			case <-rv.quit:
			}
			return
		}
		w.WriteHeader(status)
	}))
	// httptest's Close waits for hung handlers, so release them first.
	t.Cleanup(func() {
		close(rv.quit)
		rv.ts.Close()
	})
	return rv
}

// url is the receiver's webhook URL.
func (rv *receiver) url() string { return rv.ts.URL + "/hook" }

// all returns the attempts so far.
func (rv *receiver) all() []received {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return append([]received(nil), rv.got...)
}

// waitFor waits until at least n attempts arrived and returns them all.
func (rv *receiver) waitFor(n int) []received {
	rv.t.Helper()
	require.Eventually(rv.t, func() bool { return len(rv.all()) >= n }, 10*time.Second, 5*time.Millisecond,
		"waiting for %d deliveries", n)
	return rv.all()
}

// results collects delivery.Results.
type results struct {
	mu  sync.Mutex
	all []delivery.Result
}

func (r *results) add(res delivery.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, res)
}

func (r *results) list() []delivery.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery.Result(nil), r.all...)
}

// newWebhookHarness is a harness that delivers webhooks over http to
// loopback receivers with short delays, reporting results to res.
func newWebhookHarness(t *testing.T, res *results, opts ...Option) *harness {
	t.Helper()
	d := delivery.Options{Timeout: testAckTimeout, RetryDelay: testRetryDelay}
	if res != nil {
		d.OnResult = res.add
	}
	base := []Option{WithAllowHTTPWebhooks(), WithWebhookDelivery(d)}
	return newHarness(t, append(base, opts...)...)
}

// createWithHook submits an image generation as key with webhookUrl u.
func (h *harness) createWithHook(key, u string) mediagen.Generation {
	h.t.Helper()
	resp, err := h.client(key).CreateGenerationWithResponse(context.Background(), api.CreateGenerationRequest{
		Feature: "image/generation", Args: map[string]any{"prompt": "p"}, WebhookURL: u,
	})
	require.NoError(h.t, err)
	require.Equal(h.t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	return resp.JSON200.Generation
}

// secret is the current webhook secret of key's project.
func (h *harness) secret(key string) string {
	p, ok := h.srv.Project(key)
	require.True(h.t, ok)
	return p.WebhookSecret
}

// parse verifies a delivery against the fake clock and decodes it.
func (h *harness) parse(d received, secret string) *webhook.Event {
	h.t.Helper()
	ev, err := webhook.Parse(d.body, d.header, secret, webhook.WithNow(h.clock.Now))
	require.NoError(h.t, err)
	return ev
}

// rawField returns the JSON of one top-level field of body.
func rawField(t *testing.T, body []byte, field string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &m), string(body))
	require.Contains(t, m, field, string(body))
	return string(m[field])
}

func TestWebhookGenerationDoneIsDeliveredOnceAndSigned(t *testing.T) {
	h := newWebhookHarness(t, nil)
	rv := newReceiver(t, nil)
	g := h.createWithHook(keyA, rv.url())
	h.advance(time.Minute)

	d := rv.waitFor(1)[0]
	assert.Equal(t, "application/json", d.header.Get("Content-Type"))
	assert.Equal(t, strconv.FormatInt(h.clock.Now().Unix(), 10), d.header.Get("X-Service-Timestamp"), "stamped with the server's clock")
	sig := d.header.Get("X-Service-Signature")
	assert.Len(t, strings.Fields(sig), 1, sig)
	assert.True(t, strings.HasPrefix(sig, "sha256="), sig)
	require.NoError(t, webhook.Verify(d.body, d.header, h.secret(keyA), webhook.WithNow(h.clock.Now)))
	assert.ErrorIs(t, webhook.Verify(d.body, d.header, h.secret(keyB), webhook.WithNow(h.clock.Now)), webhook.ErrNoValidSignature)

	ev := h.parse(d, h.secret(keyA))
	assert.Equal(t, webhook.EventGenerationDone, ev.Name)
	require.NotNil(t, ev.Generation)
	assert.Equal(t, g.ID, ev.Generation.ID)
	require.NotNil(t, ev.Generation.Output)

	get := h.get(keyA, g.ID)
	require.Equal(t, http.StatusOK, get.StatusCode())
	assert.JSONEq(t, rawField(t, get.Body, "generation"), rawField(t, d.body, "generation"), "the body is what GET answers")
	assert.JSONEq(t, `"generation.done"`, rawField(t, d.body, "event"))

	h.advance(time.Hour)
	h.srv.WaitDeliveries()
	assert.Len(t, rv.all(), 1, "a generation is delivered once")
}

func TestWebhookFailedRendersAreDeliveredAndRefunded(t *testing.T) {
	for _, outcome := range []Outcome{OutcomeError, OutcomeTimeout} {
		t.Run(string(outcome), func(t *testing.T) {
			h := newWebhookHarness(t, nil, WithOutcome(func(string) Outcome { return outcome }))
			rv := newReceiver(t, nil)
			g := h.createWithHook(keyA, rv.url())
			assert.InDelta(t, 100-g.BalanceUsed, h.srv.Balance(keyA), 1e-9, "charged on accept")
			h.advance(time.Minute)

			ev := h.parse(rv.waitFor(1)[0], h.secret(keyA))
			assert.Equal(t, webhook.EventName("generation."+string(outcome)), ev.Name)
			require.NotNil(t, ev.Generation)
			assert.Equal(t, g.ID, ev.Generation.ID)
			assert.Equal(t, mediagen.GenerationStatus(outcome), ev.Generation.Status)
			require.NotNil(t, ev.Generation.Error)
			assert.Contains(t, ev.Generation.Error, "refunded")
			assert.Zero(t, ev.Generation.Output)
			assert.Equal(t, 100.0, h.srv.Balance(keyA), "refunded")
			h.srv.WaitDeliveries()
			assert.Len(t, rv.all(), 1)
		})
	}
}

func TestWebhookVoiceEvents(t *testing.T) {
	for _, outcome := range []Outcome{OutcomeDone, OutcomeError} {
		t.Run(string(outcome), func(t *testing.T) {
			h := newWebhookHarness(t, nil, WithOutcome(func(f string) Outcome {
				if f == feature.VoiceClone {
					return outcome
				}
				return OutcomeDone
			}))
			rv := newReceiver(t, nil)
			audio := h.sample(keyA, 12*time.Second)
			u := rv.url()
			resp, err := h.client(keyA).CreateVoiceWithResponse(context.Background(), api.CreateVoiceRequest{Name: "Narrator", Audio: audio, WebhookURL: u})
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
			id := resp.JSON200.Voice.ID
			h.advance(time.Hour)

			d := rv.waitFor(1)[0]
			ev := h.parse(d, h.secret(keyA))
			assert.Equal(t, webhook.EventName("voice."+string(outcome)), ev.Name)
			require.NotNil(t, ev.Voice)
			assert.Equal(t, id, ev.Voice.ID)
			assert.Nil(t, ev.Generation)

			get, err := h.client(keyA).GetVoiceWithResponse(context.Background(), id)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, get.StatusCode())
			assert.JSONEq(t, rawField(t, get.Body, "voice"), rawField(t, d.body, "voice"), "the body is what GET answers")
			if outcome == OutcomeDone {
				assert.Less(t, h.srv.Balance(keyA), 100.0, "a trained clone stays charged")
			} else {
				assert.Equal(t, 100.0, h.srv.Balance(keyA), "a failed clone is refunded")
			}
			h.srv.WaitDeliveries()
			assert.Len(t, rv.all(), 1)
		})
	}
}

func TestWebhookRotationSignsWithBothSecretsFor24Hours(t *testing.T) {
	h := newWebhookHarness(t, nil)
	rv := newReceiver(t, nil)
	old := h.secret(keyA)
	rotated, ok := h.srv.RotateWebhookSecret(keyA)
	require.True(t, ok)
	require.NotEqual(t, old, rotated.WebhookSecret)

	h.createWithHook(keyA, rv.url())
	h.advance(time.Minute)
	d := rv.waitFor(1)[0]
	assert.Len(t, strings.Fields(d.header.Get("X-Service-Signature")), 2, "new and old entries")
	for _, secret := range []string{rotated.WebhookSecret, old} {
		assert.NoError(t, webhook.Verify(d.body, d.header, secret, webhook.WithNow(h.clock.Now)))
	}

	h.advance(24 * time.Hour)
	h.createWithHook(keyA, rv.url())
	h.advance(time.Minute)
	d = rv.waitFor(2)[1]
	assert.Len(t, strings.Fields(d.header.Get("X-Service-Signature")), 1, "the old secret retired after 24 h")
	assert.NoError(t, webhook.Verify(d.body, d.header, rotated.WebhookSecret, webhook.WithNow(h.clock.Now)))
	assert.ErrorIs(t, webhook.Verify(d.body, d.header, old, webhook.WithNow(h.clock.Now)), webhook.ErrNoValidSignature)
}

func TestWebhookRetriesOnceAfterA500(t *testing.T) {
	var res results
	h := newWebhookHarness(t, &res)
	rv := newReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	g := h.createWithHook(keyA, rv.url())
	h.advance(time.Minute)

	got := rv.waitFor(2)
	assert.GreaterOrEqual(t, got[1].at.Sub(got[0].at), testRetryDelay, "the retry waits")
	for _, d := range got {
		ev := h.parse(d, h.secret(keyA))
		assert.Equal(t, g.ID, ev.Generation.ID)
	}
	h.srv.WaitDeliveries()
	assert.Len(t, rv.all(), 2, "acknowledged: nothing more")
	require.Len(t, res.list(), 1)
	assert.True(t, res.list()[0].Delivered)
	assert.Equal(t, 2, res.list()[0].Attempts)
}

func TestWebhookIsDroppedAfterTwoFailures(t *testing.T) {
	var res results
	h := newWebhookHarness(t, &res)
	rv := newReceiver(t, func(int) int { return http.StatusBadGateway })
	h.createWithHook(keyA, rv.url())
	h.advance(time.Minute)
	rv.waitFor(2)
	h.srv.WaitDeliveries()
	assert.Len(t, rv.all(), 2, "one retry, then dropped")
	require.Len(t, res.list(), 1)
	assert.False(t, res.list()[0].Delivered)
	assert.Equal(t, http.StatusBadGateway, res.list()[0].Status)
}

func TestWebhookReceiverThatNeverAnswersBlocksNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out real acknowledgement timeouts; runs without -short")
	}
	var res results
	const ack = 2 * time.Second
	h := newHarness(t, WithAllowHTTPWebhooks(), WithWebhookDelivery(delivery.Options{Timeout: ack, RetryDelay: testRetryDelay, OnResult: res.add}))
	rv := newReceiver(t, func(int) int { return 0 })
	for range 5 {
		h.createWithHook(keyA, rv.url())
	}
	h.advance(time.Minute)
	rv.waitFor(5)

	// Every delivery hangs now; the API must answer as usual.
	start := time.Now()
	for range 20 {
		resp, err := h.client(keyA).ListGenerationsWithResponse(context.Background(), &api.ListGenerationsParams{})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode())
		assert.Len(t, resp.JSON200.Generations, 5)
	}
	h.createWithHook(keyA, rv.url())
	assert.Less(t, time.Since(start), ack*3/4, "requests never wait on receivers")

	h.srv.WaitDeliveries()
	assert.Len(t, rv.all(), 10, "two attempts for each of the five events")
	require.Len(t, res.list(), 5)
	for _, r := range res.list() {
		assert.False(t, r.Delivered)
		assert.Equal(t, 2, r.Attempts)
		assert.Error(t, r.Err, "timed out")
	}
}

func TestWebhookConcurrentGenerationsAreEachDeliveredOnce(t *testing.T) {
	// The acknowledgement window is long: this test is about the server
	// queueing each event once, and under -race on a busy machine the
	// receiver can take longer than testAckTimeout to answer 100 fresh
	// connections, which the sender rightly answers with a retry.
	res := &results{}
	h := newHarness(t, WithAllowHTTPWebhooks(), WithWebhookDelivery(delivery.Options{
		Timeout: time.Minute, RetryDelay: testRetryDelay, OnResult: res.add,
	}))
	rv := newReceiver(t, nil)
	const n = 100
	ids := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := h.client(keyA).CreateGenerationWithResponse(context.Background(), api.CreateGenerationRequest{
				Feature: "image/generation", Args: map[string]any{"prompt": "p"}, WebhookURL: rv.url(),
			})
			if !assert.NoError(t, err) || !assert.Equal(t, http.StatusOK, resp.StatusCode()) {
				return
			}
			ids <- resp.JSON200.Generation.ID
			// Settle from many goroutines at once while renders end.
			h.clock.Advance(time.Second)
			h.srv.Settle()
			_, err = h.client(keyA).GetGenerationWithResponse(context.Background(), resp.JSON200.Generation.ID)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	close(ids)
	h.advance(time.Minute)
	h.srv.WaitDeliveries()

	want := map[string]int{}
	for id := range ids {
		want[id] = 1
	}
	require.Len(t, want, n)
	got := map[string]int{}
	for _, d := range rv.all() {
		got[h.parse(d, h.secret(keyA)).Generation.ID]++
	}
	assert.Equal(t, want, got, "each generation delivered exactly once")
	sunk := map[string]int{}
	for _, ev := range h.recorded() {
		require.NotNil(t, ev.Generation)
		sunk[ev.Generation.ID]++
	}
	assert.Equal(t, want, sunk, "each generation's event dispatched exactly once")
	for _, r := range res.list() {
		assert.Equal(t, 1, r.Attempts, "acknowledged at the first attempt")
	}
	assert.Len(t, res.list(), n)
	assert.InDelta(t, 100-n*0.04, h.srv.Balance(keyA), 1e-9)
}

func TestWebhookHTTPURLIsRefusedAndChargesNothing(t *testing.T) {
	rv := newReceiver(t, nil)
	strict := newHarness(t)
	for _, u := range []string{rv.url(), "http://localhost/hook"} {
		resp, err := strict.client(keyA).CreateGenerationWithResponse(context.Background(), api.CreateGenerationRequest{
			Feature: "image/generation", Args: map[string]any{"prompt": "p"}, WebhookURL: u,
		})
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode(), u)
		assert.Equal(t, "invalid_argument", errorCode(t, resp.HTTPResponse.Header, resp.Body))
	}
	audio := strict.sample(keyA, 12*time.Second)
	u := rv.url()
	voice, err := strict.client(keyA).CreateVoiceWithResponse(context.Background(), api.CreateVoiceRequest{Name: "N", Audio: audio, WebhookURL: u})
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, voice.StatusCode())
	assert.Equal(t, 100.0, strict.srv.Balance(keyA), "nothing charged")
	list, err := strict.client(keyA).ListGenerationsWithResponse(context.Background(), &api.ListGenerationsParams{})
	require.NoError(t, err)
	assert.Empty(t, list.JSON200.Generations, "nothing created")

	local := newWebhookHarness(t, nil)
	for _, u := range []string{"http://example.com/hook", "http://10.0.0.1/hook", "http://192.168.1.1:8080/hook"} {
		resp, err := local.client(keyA).CreateGenerationWithResponse(context.Background(), api.CreateGenerationRequest{
			Feature: "image/generation", Args: map[string]any{"prompt": "p"}, WebhookURL: u,
		})
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode(), "http is for loopback only: %s", u)
	}
	assert.Equal(t, 100.0, local.srv.Balance(keyA))
	local.advance(time.Hour)
	local.srv.WaitDeliveries()
	assert.Empty(t, rv.all())
}

func TestWebhookDeletedGenerationsNeverDeliver(t *testing.T) {
	rv := newReceiver(t, nil)
	entered := make(chan string, 4)
	release := make(chan struct{})
	var seen []string
	var mu sync.Mutex
	h := newWebhookHarness(t, nil, WithEventSink(func(ev Event) {
		mu.Lock()
		seen = append(seen, ev.Generation.ID)
		mu.Unlock()
		entered <- ev.Generation.ID
		<-release
	}))

	// Deleted while rendering: its end produces no event.
	early := h.createWithHook(keyA, rv.url())
	_, err := h.client(keyA).DeleteGenerationWithResponse(context.Background(), early.ID)
	require.NoError(t, err)

	// Finished and queued, then deleted before its event was dispatched:
	// the dispatcher is held up by the sink on an earlier event.
	first := h.createWithHook(keyA, rv.url())
	h.clock.Advance(time.Minute)
	h.srv.Balance(keyA) // settles without waiting for the sink
	assert.Equal(t, first.ID, <-entered)
	late := h.createWithHook(keyA, rv.url())
	h.clock.Advance(time.Minute)
	h.srv.Balance(keyA)
	_, err = h.client(keyA).DeleteGenerationWithResponse(context.Background(), late.ID)
	require.NoError(t, err)
	close(release)

	h.srv.Settle()
	h.srv.WaitDeliveries()
	got := rv.all()
	require.Len(t, got, 1)
	assert.Equal(t, first.ID, h.parse(got[0], h.secret(keyA)).Generation.ID)
	mu.Lock()
	assert.Equal(t, []string{first.ID}, seen)
	mu.Unlock()
}

func TestWebhookCloseAbandonsDeliveries(t *testing.T) {
	h := newHarness(t, WithAllowHTTPWebhooks(), WithWebhookDelivery(delivery.Options{Timeout: time.Minute, RetryDelay: time.Minute}))
	rv := newReceiver(t, func(int) int { return 0 })
	h.createWithHook(keyA, rv.url())
	h.advance(time.Minute)
	rv.waitFor(1)

	start := time.Now()
	h.srv.Close()
	assert.Less(t, time.Since(start), 10*time.Second, "Close does not wait out the acknowledgement window")
	h.srv.WaitDeliveries()
	assert.Len(t, rv.all(), 1, "the retry was abandoned")

	h.createWithHook(keyA, rv.url())
	h.advance(time.Minute)
	assert.Len(t, rv.all(), 1, "no webhooks after Close")
}

func TestWithoutWebhookDeliverySendsNothing(t *testing.T) {
	h := newHarness(t, WithAllowHTTPWebhooks(), WithoutWebhookDelivery())
	rv := newReceiver(t, nil)
	h.createWithHook(keyA, rv.url())
	h.advance(time.Minute)
	h.srv.WaitDeliveries()
	require.Len(t, h.recorded(), 1, "the sink still sees the event")
	assert.Empty(t, rv.all())
}
