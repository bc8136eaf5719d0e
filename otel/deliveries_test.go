package otel_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/webhook"
)

// TestDeliveriesCounted: a handler with hub.CountDeliveries' options
// counts a verified delivery, its repeat as a duplicate and a badly signed
// one as refused, in the global meter provider; the error function given
// still sees the refusal.
func TestDeliveriesCounted(t *testing.T) {
	rec := newRecorder(t)
	otel.SetMeterProvider(rec.mp)
	t.Cleanup(func() { otel.SetMeterProvider(noop.NewMeterProvider()) })
	h, err := hub.New()
	require.NoError(t, err)
	var refused []error
	onError := func(_ context.Context, ev *webhook.Event, err error) {
		if ev == nil {
			refused = append(refused, err)
		}
	}
	const secret = "whsec_test31"
	receiver, err := webhook.Handler(secret, h.Deliver, hub.CountDeliveries(nil, onError)...)
	require.NoError(t, err)
	srv := httptest.NewServer(receiver)
	t.Cleanup(srv.Close)

	body := []byte(`{"event":"generation.done","generation":{"id":"gen_31","status":"done","feature":"image_generation"}}`)
	post := func(secret string) int {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(string(body)))
		require.NoError(t, err)
		webhook.SetHeaders(req.Header, []string{secret}, time.Now(), body)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, post(secret))
	assert.Equal(t, http.StatusOK, post(secret), "a repeat is acknowledged")
	assert.Equal(t, http.StatusUnauthorized, post("whsec_other"))

	m := rec.metrics(t)["mediagen.webhook.deliveries"]
	for _, result := range []string{"verified", "duplicate", "refused"} {
		assert.Equal(t, int64(1), sumInt(m, attribute.String("mediagen.result", result)), result)
	}
	require.Len(t, refused, 1)
	assert.ErrorIs(t, refused[0], webhook.ErrNoValidSignature)
}
