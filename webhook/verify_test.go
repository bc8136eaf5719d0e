package webhook_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/webhook"
)

func headerOf(timestamp string, signatures ...string) http.Header {
	h := http.Header{}
	if timestamp != "" {
		h.Set(webhook.HeaderTimestamp, timestamp)
	}
	for _, s := range signatures {
		h.Add(webhook.HeaderSignature, s)
	}
	return h
}

func clock(t time.Time) webhook.Option { return webhook.WithNow(func() time.Time { return t }) }

func TestVerifyAcceptsOpenSSLVectors(t *testing.T) {
	for name, v := range readVectors(t) {
		t.Run(name, func(t *testing.T) {
			err := webhook.Verify(v.payload, headerOf(v.timestamp, v.entry()), v.secret, clock(v.at().Add(10*time.Second)))
			require.NoError(t, err)
		})
	}
}

func TestVerify(t *testing.T) {
	vs := readVectors(t)
	gen, old := vs["generation-new"], vs["generation-old"]
	body, ts, at := gen.payload, gen.timestamp, gen.at()
	newS, oldS := gen.secret, old.secret

	reserialized := func() []byte {
		var v any
		require.NoError(t, json.Unmarshal(body, &v))
		out, err := json.Marshal(v)
		require.NoError(t, err)
		require.NotEqual(t, body, out)
		return out
	}()
	compacted := func() []byte {
		var buf bytes.Buffer
		require.NoError(t, json.Compact(&buf, body))
		return buf.Bytes()
	}()
	tampered := bytes.Replace(body, []byte(`"balanceUsed": 0.04`), []byte(`"balanceUsed": 0.00`), 1)
	require.NotEqual(t, body, tampered)

	junk := strings.Repeat("v1=deadbeef ", 15)

	tests := []struct {
		name    string
		payload []byte
		header  http.Header
		secret  string
		opts    []webhook.Option
		now     time.Time
		wantErr error
	}{
		{name: "one entry", header: headerOf(ts, gen.entry())},
		{name: "two entries, new secret", header: headerOf(ts, gen.entry()+" "+old.entry())},
		{name: "two entries, old secret", secret: oldS, header: headerOf(ts, gen.entry()+" "+old.entry())},
		{name: "old entry only, old secret kept during rotation", header: headerOf(ts, old.entry()), opts: []webhook.Option{webhook.WithSecrets(oldS)}},
		{name: "old entry only, rotation secrets only", secret: "whsec_unrelated", header: headerOf(ts, old.entry()), opts: []webhook.Option{webhook.WithSecrets("", oldS)}},
		{name: "old entry only, new secret only", header: headerOf(ts, old.entry()), wantErr: webhook.ErrNoValidSignature},
		{name: "two entries, neither secret", secret: "whsec_unrelated", header: headerOf(ts, gen.entry()+" "+old.entry()), wantErr: webhook.ErrNoValidSignature},
		{name: "entries on separate header lines", header: headerOf(ts, old.entry(), gen.entry())},
		{name: "entries separated by comma", header: headerOf(ts, old.entry()+", "+gen.entry())},
		{name: "tabs and extra spaces", header: headerOf(ts, "\t "+old.entry()+"  \t"+gen.entry()+" ")},
		{name: "upper-case hex and scheme", header: headerOf(ts, "SHA256="+strings.ToUpper(gen.hex))},

		{name: "tampered body", payload: tampered, header: headerOf(ts, gen.entry()), wantErr: webhook.ErrNoValidSignature},
		{name: "re-serialized JSON", payload: reserialized, header: headerOf(ts, gen.entry()), wantErr: webhook.ErrNoValidSignature},
		{name: "compacted JSON", payload: compacted, header: headerOf(ts, gen.entry()), wantErr: webhook.ErrNoValidSignature},
		{name: "trailing newline", payload: append(append([]byte{}, body...), '\n'), header: headerOf(ts, gen.entry()), wantErr: webhook.ErrNoValidSignature},
		{name: "truncated body", payload: body[:len(body)-1], header: headerOf(ts, gen.entry()), wantErr: webhook.ErrNoValidSignature},
		{name: "empty body", payload: []byte{}, header: headerOf(ts, gen.entry()), wantErr: webhook.ErrNoValidSignature},
		{name: "signature moved to another timestamp", header: headerOf(strconv.FormatInt(at.Unix()+1, 10), gen.entry()), wantErr: webhook.ErrNoValidSignature},
		{name: "timestamp with leading zero is other text", header: headerOf("0"+ts, gen.entry()), wantErr: webhook.ErrNoValidSignature},

		{name: "age exactly the tolerance", header: headerOf(ts, gen.entry()), now: at.Add(5 * time.Minute)},
		{name: "age just over the tolerance", header: headerOf(ts, gen.entry()), now: at.Add(5*time.Minute + time.Nanosecond), wantErr: webhook.ErrTimestampTooOld},
		{name: "age a second over the tolerance", header: headerOf(ts, gen.entry()), now: at.Add(5*time.Minute + time.Second), wantErr: webhook.ErrTimestampTooOld},
		{name: "a day old", header: headerOf(ts, gen.entry()), now: at.Add(24 * time.Hour), wantErr: webhook.ErrTimestampTooOld},
		{name: "ahead exactly the tolerance", header: headerOf(ts, gen.entry()), now: at.Add(-5 * time.Minute)},
		{name: "ahead just over the tolerance", header: headerOf(ts, gen.entry()), now: at.Add(-5*time.Minute - time.Nanosecond), wantErr: webhook.ErrTimestampInFuture},
		{name: "ahead a second over the tolerance", header: headerOf(ts, gen.entry()), now: at.Add(-5*time.Minute - time.Second), wantErr: webhook.ErrTimestampInFuture},
		{name: "custom tolerance, inside", header: headerOf(ts, gen.entry()), now: at.Add(10 * time.Second), opts: []webhook.Option{webhook.WithTolerance(10 * time.Second)}},
		{name: "custom tolerance, outside", header: headerOf(ts, gen.entry()), now: at.Add(11 * time.Second), opts: []webhook.Option{webhook.WithTolerance(10 * time.Second)}, wantErr: webhook.ErrTimestampTooOld},
		{name: "largest int64 timestamp", header: headerOf("9223372036854775807", gen.entry()), wantErr: webhook.ErrTimestampInFuture},
		{name: "zero timestamp", header: headerOf("0", gen.entry()), wantErr: webhook.ErrTimestampTooOld},

		{name: "no headers", header: http.Header{}, wantErr: webhook.ErrMissingHeader},
		{name: "nil header", header: nil, wantErr: webhook.ErrMissingHeader},
		{name: "no timestamp", header: headerOf("", gen.entry()), wantErr: webhook.ErrMissingHeader},
		{name: "empty timestamp", header: http.Header{webhook.HeaderTimestamp: {""}, webhook.HeaderSignature: {gen.entry()}}, wantErr: webhook.ErrMissingHeader},
		{name: "no signature", header: headerOf(ts), wantErr: webhook.ErrMissingHeader},
		{name: "empty signature", header: headerOf(ts, ""), wantErr: webhook.ErrMissingHeader},
		{name: "two timestamps", header: http.Header{webhook.HeaderTimestamp: {ts, ts}, webhook.HeaderSignature: {gen.entry()}}, wantErr: webhook.ErrInvalidTimestamp},
		{name: "letters", header: headerOf("yesterday", gen.entry()), wantErr: webhook.ErrInvalidTimestamp},
		{name: "negative", header: headerOf("-"+ts, gen.entry()), wantErr: webhook.ErrInvalidTimestamp},
		{name: "plus sign", header: headerOf("+"+ts, gen.entry()), wantErr: webhook.ErrInvalidTimestamp},
		{name: "fraction", header: headerOf(ts+".5", gen.entry()), wantErr: webhook.ErrInvalidTimestamp},
		{name: "exponent", header: headerOf("1.7637192e9", gen.entry()), wantErr: webhook.ErrInvalidTimestamp},
		{name: "hex timestamp", header: headerOf("0x69200000", gen.entry()), wantErr: webhook.ErrInvalidTimestamp},
		{name: "milliseconds overflow", header: headerOf("92233720368547758070", gen.entry()), wantErr: webhook.ErrInvalidTimestamp},
		{name: "int64 overflow", header: headerOf("9223372036854775808", gen.entry()), wantErr: webhook.ErrInvalidTimestamp},
		{name: "space inside timestamp", header: http.Header{webhook.HeaderTimestamp: {" " + ts}, webhook.HeaderSignature: {gen.entry()}}, wantErr: webhook.ErrInvalidTimestamp},
		{name: "RFC 3339 timestamp", header: headerOf(at.UTC().Format(time.RFC3339), gen.entry()), wantErr: webhook.ErrInvalidTimestamp},

		{name: "malformed entries skipped", header: headerOf(ts, "sha256= sha256=zz v1="+gen.hex+" sha256="+gen.hex[:63]+" "+gen.entry())},
		{name: "only malformed entries", header: headerOf(ts, "sha256="+gen.hex[:63]+" sha256="+gen.hex+"0 sha256:"+gen.hex), wantErr: webhook.ErrNoValidSignature},
		{name: "bare hex without scheme", header: headerOf(ts, gen.hex), wantErr: webhook.ErrNoValidSignature},
		{name: "other scheme with right digest", header: headerOf(ts, "sha512="+gen.hex), wantErr: webhook.ErrNoValidSignature},
		{name: "non-hex digits", header: headerOf(ts, "sha256="+strings.Repeat("g", 64)), wantErr: webhook.ErrNoValidSignature},
		{name: "valid entry after 15 others", header: headerOf(ts, junk+gen.entry())},
		{name: "valid entry after 16 others is not examined", header: headerOf(ts, junk+"v1=x "+gen.entry()), wantErr: webhook.ErrNoValidSignature},
		{name: "separators only", header: headerOf(ts, " , \t"), wantErr: webhook.ErrNoValidSignature},

		{name: "empty secret", secret: "-", header: headerOf(ts, gen.entry()), wantErr: webhook.ErrNoSecret},
		{name: "empty secrets everywhere", secret: "-", header: headerOf(ts, gen.entry()), opts: []webhook.Option{webhook.WithSecrets("", "")}, wantErr: webhook.ErrNoSecret},
		{name: "empty secret, rotation secret matches", secret: "-", header: headerOf(ts, gen.entry()), opts: []webhook.Option{webhook.WithSecrets(newS)}},
		{name: "zero tolerance refused", header: headerOf(ts, gen.entry()), opts: []webhook.Option{webhook.WithTolerance(0)}, wantErr: webhook.ErrInvalidOption},
		{name: "nil clock refused", header: headerOf(ts, gen.entry()), opts: []webhook.Option{webhook.WithNow(nil)}, wantErr: webhook.ErrInvalidOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := tt.payload
			if payload == nil {
				payload = body
			}
			secret := tt.secret
			switch secret {
			case "":
				secret = newS
			case "-":
				secret = ""
			}
			now := tt.now
			if now.IsZero() {
				now = at.Add(30 * time.Second)
			}
			opts := append([]webhook.Option{clock(now)}, tt.opts...)

			err := webhook.Verify(payload, tt.header, secret, opts...)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			for _, s := range []string{newS, oldS, expectedHex(newS, ts, payload), expectedHex(oldS, ts, payload), gen.hex} {
				assert.NotContains(t, err.Error(), s, "the error reveals a secret or a signature")
			}
		})
	}
}

// expectedHex is the signature the verifier computes, derived here so the
// test can check it never leaks into an error.
func expectedHex(secret, ts string, payload []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(payload)
	return hex.EncodeToString(m.Sum(nil))
}

func TestErrorsAreDistinct(t *testing.T) {
	errs := []error{
		webhook.ErrMissingHeader, webhook.ErrInvalidTimestamp, webhook.ErrTimestampTooOld,
		webhook.ErrTimestampInFuture, webhook.ErrNoValidSignature, webhook.ErrNoSecret,
		webhook.ErrInvalidPayload, webhook.ErrInvalidOption,
	}
	for i, a := range errs {
		for j, b := range errs {
			assert.Equal(t, i == j, errors.Is(a, b), "%v vs %v", a, b)
		}
	}
}

func TestVerifyJoinsInvalidOptions(t *testing.T) {
	err := webhook.Verify([]byte("{}"), http.Header{}, "s", webhook.WithTolerance(-time.Second), webhook.WithMaxBodyBytes(0))
	require.ErrorIs(t, err, webhook.ErrInvalidOption)
	assert.Contains(t, err.Error(), "WithTolerance")
	assert.Contains(t, err.Error(), "WithMaxBodyBytes")
}

// BenchmarkVerify verifies bodies of 1 KiB, 1 MiB and 16 MiB carrying two
// entries and, in the same iteration, runs one plain HMAC-SHA256 pass over
// the body, the floor; which of the two goes first alternates, so neither
// warms the cache for the other. The verify/hmac metric is their ratio:
// about 1 when Verify hashes the body once, however many entries the
// header carries.
func BenchmarkVerify(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20, 16 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			payload := bytes.Repeat([]byte(`{"event":"generation.done"} `), size/28+1)[:size]
			at := time.Unix(1763719200, 0)
			header := http.Header{}
			webhook.SetHeaders(header, []string{"whsec_new", "whsec_old"}, at, payload)
			opts := []webhook.Option{clock(at)}
			verify := func() {
				if err := webhook.Verify(payload, header, "whsec_old", opts...); err != nil {
					b.Fatal(err)
				}
			}
			floor := func() {
				m := hmac.New(sha256.New, []byte("whsec_old"))
				m.Write([]byte("1763719200."))
				m.Write(payload)
				m.Sum(nil)
			}
			var verifyTime, hmacTime time.Duration
			b.SetBytes(int64(size))
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				if i%2 == 0 {
					verify()
				} else {
					floor()
				}
				t1 := time.Now()
				if i%2 == 0 {
					floor()
				} else {
					verify()
				}
				t2 := time.Now()
				if i%2 == 0 {
					verifyTime, hmacTime = verifyTime+t1.Sub(t0), hmacTime+t2.Sub(t1)
				} else {
					hmacTime, verifyTime = hmacTime+t1.Sub(t0), verifyTime+t2.Sub(t1)
				}
			}
			b.ReportMetric(float64(verifyTime)/float64(hmacTime), "verify/hmac")
			b.ReportMetric(float64(verifyTime.Nanoseconds())/float64(b.N), "verify-ns/op")
		})
	}
}
