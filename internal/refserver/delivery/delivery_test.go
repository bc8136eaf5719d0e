package delivery_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/refserver/delivery"
	"github.com/mediagen/mediagen-go/webhook"
)

type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

// receiver records every request and answers with the statuses given in
// turn (200 once they run out).
type receiver struct {
	mu       sync.Mutex
	got      []received
	statuses []int
	hang     chan struct{} // when non-nil, every request waits on it
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.got = append(rc.got, received{r.Header.Clone(), body, time.Now()})
	status := http.StatusOK
	if len(rc.statuses) > 0 {
		status, rc.statuses = rc.statuses[0], rc.statuses[1:]
	}
	hang := rc.hang
	rc.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
		return
	}
	w.WriteHeader(status)
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

func gen(id string) *mediagen.Generation {
	return &mediagen.Generation{
		ID: id, ProjectID: "prj_1", Feature: mediagen.FeatureImageGeneration, Kind: mediagen.KindImage,
		Status: mediagen.GenerationStatusDone, Params: map[string]any{"prompt": "a red kite"},
		BalanceUsed: 0.04, RequestDate: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC),
	}
}

func results() (func(delivery.Result), func() []delivery.Result) {
	var mu sync.Mutex
	var out []delivery.Result
	return func(r delivery.Result) {
			mu.Lock()
			out = append(out, r)
			mu.Unlock()
		}, func() []delivery.Result {
			mu.Lock()
			defer mu.Unlock()
			return append([]delivery.Result(nil), out...)
		}
}

func TestDeliversSignedGenerationEventOnce(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	onResult, got := results()
	s := delivery.New(delivery.Options{OnResult: onResult})
	defer s.Close()

	require.NoError(t, s.SendGeneration(srv.URL+"/hooks", []string{"whsec_new"}, "generation.done", gen("gen_1")))
	s.Wait()

	reqs := rc.requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.NoError(t, webhook.Verify(r.body, r.header, "whsec_new"))
	assert.Len(t, strings.Fields(r.header.Get("X-Service-Signature")), 1)

	var ev api.GenerationEvent
	require.NoError(t, json.Unmarshal(r.body, &ev))
	assert.Equal(t, api.GenerationEventName("generation.done"), ev.Event)
	assert.Equal(t, "gen_1", ev.Generation.ID)

	res := got()
	require.Len(t, res, 1)
	assert.True(t, res[0].Delivered)
	assert.Equal(t, 1, res[0].Attempts)
	assert.Equal(t, http.StatusOK, res[0].Status)
}

func TestRotationCarriesTwoEntriesEitherSecretVerifies(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	s := delivery.New(delivery.Options{})
	defer s.Close()

	v := &mediagen.Voice{ID: "vc_1", Owner: mediagen.VoiceOwnerProject, Name: "Narrator"}
	require.NoError(t, s.SendVoice(srv.URL, []string{"whsec_new", "whsec_old"}, "voice.done", v))
	s.Wait()

	reqs := rc.requests()
	require.Len(t, reqs, 1)
	assert.Len(t, strings.Fields(reqs[0].header.Get("X-Service-Signature")), 2)
	assert.NoError(t, webhook.Verify(reqs[0].body, reqs[0].header, "whsec_new"), "receiver already on the new secret")
	assert.NoError(t, webhook.Verify(reqs[0].body, reqs[0].header, "whsec_old"), "receiver still on the old secret")
	assert.Error(t, webhook.Verify(reqs[0].body, reqs[0].header, "whsec_other"))

	var ev api.VoiceEvent
	require.NoError(t, json.Unmarshal(reqs[0].body, &ev))
	assert.Equal(t, api.VoiceEventName("voice.done"), ev.Event)
	assert.Equal(t, "vc_1", ev.Voice.ID)
}

func TestRetriesOnceAfterNon2xxThenSucceeds(t *testing.T) {
	rc := &receiver{statuses: []int{http.StatusInternalServerError}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	onResult, got := results()
	const delay = 150 * time.Millisecond
	s := delivery.New(delivery.Options{RetryDelay: delay, OnResult: onResult})
	defer s.Close()

	require.NoError(t, s.SendGeneration(srv.URL, []string{"k"}, "generation.error", gen("gen_2")))
	s.Wait()

	reqs := rc.requests()
	require.Len(t, reqs, 2)
	assert.GreaterOrEqual(t, reqs[1].at.Sub(reqs[0].at), delay, "the retry waits the retry delay")
	assert.Equal(t, reqs[0].body, reqs[1].body, "the retry sends the same event")
	require.NoError(t, webhook.Verify(reqs[1].body, reqs[1].header, "k"), "the retry is signed afresh")
	res := got()
	require.Len(t, res, 1)
	assert.True(t, res[0].Delivered)
	assert.Equal(t, 2, res[0].Attempts)
}

func TestDroppedAfterTwoFailures(t *testing.T) {
	rc := &receiver{statuses: []int{http.StatusServiceUnavailable, http.StatusBadRequest, http.StatusOK}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	onResult, got := results()
	s := delivery.New(delivery.Options{RetryDelay: 10 * time.Millisecond, OnResult: onResult})
	defer s.Close()

	require.NoError(t, s.SendGeneration(srv.URL, []string{"k"}, "generation.timeout", gen("gen_3")))
	s.Wait()

	assert.Len(t, rc.requests(), 2, "one retry, then dropped")
	res := got()
	require.Len(t, res, 1)
	assert.False(t, res[0].Delivered)
	assert.Equal(t, http.StatusBadRequest, res[0].Status)
}

func TestReceiverThatNeverAnswersTimesOut(t *testing.T) {
	rc := &receiver{hang: make(chan struct{})}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	defer close(rc.hang)
	onResult, got := results()
	s := delivery.New(delivery.Options{Timeout: 100 * time.Millisecond, RetryDelay: 10 * time.Millisecond, OnResult: onResult})
	defer s.Close()

	start := time.Now()
	require.NoError(t, s.SendGeneration(srv.URL, []string{"k"}, "generation.done", gen("gen_4")))
	s.Wait()

	assert.Less(t, time.Since(start), 5*time.Second, "the sender does not hang with the receiver")
	assert.Len(t, rc.requests(), 2)
	res := got()
	require.Len(t, res, 1)
	assert.False(t, res[0].Delivered)
	assert.Error(t, res[0].Err)
}

func TestRedirectIsNotAnAcknowledgement(t *testing.T) {
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer target.Close()
	redirect := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	defer redirect.Close()
	onResult, got := results()
	s := delivery.New(delivery.Options{RetryDelay: time.Millisecond, OnResult: onResult})
	defer s.Close()

	require.NoError(t, s.SendGeneration(redirect.URL, []string{"k"}, "generation.done", gen("gen_5")))
	s.Wait()
	assert.Zero(t, hits.Load(), "the event never reaches a host it was redirected to")
	require.Len(t, got(), 1)
	assert.False(t, got()[0].Delivered)
}

func TestConcurrentSendsDeliverEachEventExactlyOnce(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	s := delivery.New(delivery.Options{})
	defer s.Close()

	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, s.SendGeneration(srv.URL, []string{"k"}, "generation.done", gen(fmt.Sprintf("gen_%03d", i))))
		}()
	}
	wg.Wait()
	s.Wait()

	seen := map[string]int{}
	for _, r := range rc.requests() {
		var ev api.GenerationEvent
		require.NoError(t, json.Unmarshal(r.body, &ev))
		seen[ev.Generation.ID]++
	}
	assert.Len(t, seen, n)
	for id, count := range seen {
		assert.Equal(t, 1, count, id)
	}
}

func TestCloseAbandonsPendingRetry(t *testing.T) {
	rc := &receiver{statuses: []int{http.StatusInternalServerError}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	onResult, got := results()
	s := delivery.New(delivery.Options{RetryDelay: time.Hour, OnResult: onResult})

	require.NoError(t, s.SendGeneration(srv.URL, []string{"k"}, "generation.done", gen("gen_6")))
	require.Eventually(t, func() bool { return len(rc.requests()) == 1 }, 5*time.Second, 5*time.Millisecond)
	s.Close()

	assert.Len(t, rc.requests(), 1)
	require.Len(t, got(), 1)
	assert.False(t, got()[0].Delivered)
}

func TestTimestampComesFromTheServerClock(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := delivery.New(delivery.Options{Now: func() time.Time { return fixed }})
	defer s.Close()

	require.NoError(t, s.SendGeneration(srv.URL, []string{"k"}, "generation.done", gen("gen_7")))
	s.Wait()
	reqs := rc.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "1767323045", reqs[0].header.Get("X-Service-Timestamp"))
	assert.NoError(t, webhook.Verify(reqs[0].body, reqs[0].header, "k", webhook.WithNow(func() time.Time { return fixed.Add(time.Minute) })))
}

func TestAttemptsRecordTheirHeadersAnswerAndLatency(t *testing.T) {
	rc := &receiver{statuses: []int{http.StatusInternalServerError}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	onAttempt, attempts := results()
	onResult, got := results()
	s := delivery.New(delivery.Options{RetryDelay: 10 * time.Millisecond, OnAttempt: onAttempt, OnResult: onResult})
	defer s.Close()

	require.NoError(t, s.SendGeneration(srv.URL, []string{"k"}, "generation.done", gen("gen_3")))
	s.Wait()

	reqs := rc.requests()
	require.Len(t, reqs, 2)
	steps := attempts()
	require.Len(t, steps, 2, "one report per attempt")
	assert.Len(t, steps[0].Tries, 1)
	assert.False(t, steps[0].Delivered, "after the refused first attempt")
	assert.True(t, steps[1].Delivered)
	res := got()
	require.Len(t, res, 1)
	assert.Equal(t, "gen_3", res[0].Subject)
	assert.Equal(t, steps[1].Tries, res[0].Tries)
	require.Len(t, res[0].Tries, 2)
	for i, a := range res[0].Tries {
		assert.Equal(t, reqs[i].header.Get("X-Service-Timestamp"), a.Timestamp, "attempt %d", i+1)
		assert.Equal(t, reqs[i].header.Get("X-Service-Signature"), a.Signature, "attempt %d", i+1)
		assert.Positive(t, a.Latency)
		assert.NoError(t, a.Err)
	}
	assert.Equal(t, []int{500, 200}, []int{res[0].Tries[0].Status, res[0].Tries[1].Status})
}
