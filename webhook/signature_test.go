package webhook_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/webhook"
)

func TestSignMatchesOpenSSL(t *testing.T) {
	for name, v := range readVectors(t) {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, v.entry(), webhook.Sign(v.secret, v.at(), v.payload))
		})
	}
}

func TestSignIgnoresSubSecondsAndZone(t *testing.T) {
	v := readVectors(t)["generation-new"]
	at := v.at().Add(999 * time.Millisecond).In(time.FixedZone("UTC+5", 5*3600))
	assert.Equal(t, v.entry(), webhook.Sign(v.secret, at, v.payload))
}

func TestSignatureHeader(t *testing.T) {
	vs := readVectors(t)
	gen, old := vs["generation-new"], vs["generation-old"]

	got := webhook.SignatureHeader([]string{gen.secret, old.secret}, gen.at(), gen.payload)
	assert.Equal(t, gen.entry()+" "+old.entry(), got)
	assert.Equal(t, gen.entry(), webhook.SignatureHeader([]string{gen.secret}, gen.at(), gen.payload))
	assert.Empty(t, webhook.SignatureHeader(nil, gen.at(), gen.payload))
}

func TestSetHeaders(t *testing.T) {
	vs := readVectors(t)
	gen, old := vs["generation-new"], vs["generation-old"]
	h := http.Header{}
	h.Set(webhook.HeaderSignature, "sha256=stale")

	webhook.SetHeaders(h, []string{gen.secret, old.secret}, gen.at(), gen.payload)

	assert.Equal(t, []string{gen.timestamp}, h.Values("x-service-timestamp"))
	assert.Equal(t, []string{gen.entry() + " " + old.entry()}, h.Values("x-service-signature"))
	require.NoError(t, webhook.Verify(gen.payload, h, old.secret, clock(gen.at())))
}

func TestSignRoundTrip(t *testing.T) {
	at := time.Unix(1763719200, 0).UTC()
	payload := []byte(`{"event":"voice.error","voice":{"id":"voc_1"}}`)
	entry := webhook.Sign("whsec_x", at, payload)
	require.True(t, strings.HasPrefix(entry, "sha256="))
	assert.Len(t, entry, len("sha256=")+64)

	h := http.Header{}
	h.Set(webhook.HeaderTimestamp, "1763719200")
	h.Set(webhook.HeaderSignature, entry)
	require.NoError(t, webhook.Verify(payload, h, "whsec_x", clock(at)))
	require.ErrorIs(t, webhook.Verify(payload, h, "whsec_y", clock(at)), webhook.ErrNoValidSignature)
}
