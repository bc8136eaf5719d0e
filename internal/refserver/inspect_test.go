package refserver

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/refserver/delivery"
)

func TestDeliveriesRecordEachAttemptOfTheProject(t *testing.T) {
	h := newWebhookHarness(t, nil)
	rv := newReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	g := h.createWithHook(keyA, rv.url())
	assert.Empty(t, h.srv.Deliveries(keyA), "nothing before the render ends")
	h.advance(time.Minute)

	got := rv.waitFor(2)
	h.srv.WaitDeliveries()
	list := h.srv.Deliveries(keyA)
	require.Len(t, list, 1)
	d := list[0]
	assert.True(t, d.Ended)
	assert.Equal(t, h.clock.Now(), d.Queued)
	assert.Equal(t, g.ID, d.Result.Subject)
	assert.Equal(t, "generation.done", d.Result.Event)
	assert.Equal(t, rv.url(), d.Result.URL)
	assert.True(t, d.Result.Delivered)
	require.Len(t, d.Result.Tries, 2)
	for i, a := range d.Result.Tries {
		assert.Equal(t, got[i].header.Get("X-Service-Signature"), a.Signature)
		assert.Equal(t, got[i].header.Get("X-Service-Timestamp"), a.Timestamp)
		assert.Positive(t, a.Latency)
	}
	assert.Equal(t, http.StatusInternalServerError, d.Result.Tries[0].Status)
	assert.Equal(t, http.StatusNoContent, d.Result.Tries[1].Status)
	assert.Empty(t, h.srv.Deliveries(keyB), "another project sees none of them")
	assert.Empty(t, h.srv.Deliveries("mg_unknown"))
}

func TestDeliveriesKeepTheNewest(t *testing.T) {
	var l deliveryLog
	for i := range keptDeliveries + 5 {
		l.start("k", testStart.Add(time.Duration(i)*time.Second), delivery.Result{Event: "generation.done", Subject: fmt.Sprint("gen_", i)})
	}
	list := l.list("k")
	require.Len(t, list, keptDeliveries)
	assert.Equal(t, testStart.Add((keptDeliveries+4)*time.Second), list[0].Queued, "newest first")
	assert.Equal(t, testStart.Add(5*time.Second), list[len(list)-1].Queued)
	assert.Len(t, l.open, keptDeliveries, "evicted ones are forgotten")
}

func TestRecentGenerationsAreTheProjectsNewestFirst(t *testing.T) {
	h := newHarness(t)
	first := h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "one"})
	h.advance(time.Second)
	second := h.mustCreate(keyA, "image/generation", map[string]any{"prompt": "two"})
	h.mustCreate(keyB, "image/generation", map[string]any{"prompt": "other"})
	h.advance(time.Minute)

	gens, ok := h.srv.RecentGenerations(keyA, "http://example.test", 10)
	require.True(t, ok)
	require.Len(t, gens, 2)
	assert.Equal(t, []string{second.ID, first.ID}, []string{gens[0].ID, gens[1].ID})
	assert.Equal(t, mediagen.GenerationStatusDone, gens[0].Status)
	assert.Contains(t, gens[0].Output.Image, "http://example.test/storage/")

	gens, ok = h.srv.RecentGenerations(keyA, "http://example.test", 1)
	require.True(t, ok)
	assert.Len(t, gens, 1)
	_, ok = h.srv.RecentGenerations("mg_unknown", "", 10)
	assert.False(t, ok)
	assert.Equal(t, h.clock.Now(), h.srv.Now())
}
