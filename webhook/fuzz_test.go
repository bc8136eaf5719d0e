package webhook_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/webhook"
)

// fuzzSecret and fuzzNow match the seed corpus in testdata/fuzz, which holds
// deliveries signed with this secret around this time.
const fuzzSecret = "whsec_new_7f3a9c"

var fuzzNow = time.Unix(1763719230, 0)

// FuzzVerify feeds arbitrary bodies and headers to Verify. It must never
// panic, and it may accept only when the header holds the signature an
// independent HMAC computes for that timestamp and body, inside the tolerance.
func FuzzVerify(f *testing.F) {
	f.Add([]byte(`{"event":"voice.done"}`), "1763719230", "sha256=00")
	f.Fuzz(func(t *testing.T, payload []byte, timestamp, signature string) {
		header := http.Header{webhook.HeaderTimestamp: {timestamp}, webhook.HeaderSignature: {signature}}
		err := webhook.Verify(payload, header, fuzzSecret, webhook.WithNow(func() time.Time { return fuzzNow }))
		if err != nil {
			return
		}
		secs, perr := strconv.ParseUint(timestamp, 10, 63)
		require.NoError(t, perr, "accepted timestamp %q", timestamp)
		require.InDelta(t, fuzzNow.Unix(), int64(secs), float64(5*60), "accepted a stale timestamp")

		m := hmac.New(sha256.New, []byte(fuzzSecret))
		m.Write([]byte(timestamp + "."))
		m.Write(payload)
		want := "sha256=" + hex.EncodeToString(m.Sum(nil))
		entries := strings.FieldsFunc(strings.ToLower(signature), func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
		require.Contains(t, entries, want, "accepted a payload that was not signed")
	})
}

// FuzzVerifyTampered signs a body, then verifies another one with the same
// headers: only the very bytes that were signed, at an age within the
// tolerance, may pass.
func FuzzVerifyTampered(f *testing.F) {
	f.Add([]byte(`{"event":"generation.done"}`), []byte(`{"event": "generation.done"}`), int64(0))
	f.Fuzz(func(t *testing.T, signed, received []byte, offset int64) {
		at := fuzzNow.Add(time.Duration(offset%(3600)) * time.Second)
		header := http.Header{}
		webhook.SetHeaders(header, []string{"whsec_other", fuzzSecret}, at, signed)
		err := webhook.Verify(received, header, fuzzSecret, webhook.WithNow(func() time.Time { return fuzzNow }))
		age := fuzzNow.Sub(at)
		fresh := age <= 5*time.Minute && -age <= 5*time.Minute
		require.Equal(t, bytes.Equal(signed, received) && fresh, err == nil, "err: %v", err)
	})
}

// FuzzHandler posts arbitrary deliveries, signed or not, to Handler. It must
// never panic, must answer one of its documented statuses, must call the
// callback only for a body signed with the secret, and must echo neither the
// secret nor the expected signature.
func FuzzHandler(f *testing.F) {
	f.Add([]byte(`{"event":"generation.done","generation":{"id":"gen_1"}}`), "", "", true)
	f.Add([]byte(`{"event":"voice.done","voice":{"id":"v_1"}}`), "1763719230", "sha256=00", false)
	f.Fuzz(func(t *testing.T, payload []byte, timestamp, signature string, sign bool) {
		var calls atomic.Int32
		h := handlerOf(t, fuzzSecret, func(context.Context, *webhook.Event) error { calls.Add(1); return nil },
			webhook.WithNow(func() time.Time { return fuzzNow }), webhook.WithMaxBodyBytes(4096),
			webhook.WithErrorFunc(func(context.Context, *webhook.Event, error) {}))
		req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(payload))
		req.Header.Set(webhook.HeaderTimestamp, timestamp)
		req.Header.Set(webhook.HeaderSignature, signature)
		if sign {
			webhook.SetHeaders(req.Header, []string{fuzzSecret}, fuzzNow, payload)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		require.Contains(t, []int{http.StatusOK, http.StatusBadRequest, http.StatusUnauthorized, http.StatusRequestEntityTooLarge}, rec.Code)
		verified := webhook.Verify(payload, req.Header, fuzzSecret, webhook.WithNow(func() time.Time { return fuzzNow })) == nil
		if calls.Load() > 0 {
			require.True(t, verified, "callback ran for a delivery that does not verify")
		}
		want := webhook.Sign(fuzzSecret, fuzzNow, payload)
		require.NotContains(t, rec.Body.String(), fuzzSecret)
		require.NotContains(t, rec.Body.String(), want[len("sha256="):])
	})
}
