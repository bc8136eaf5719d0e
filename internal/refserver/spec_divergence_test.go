package refserver_test

// Divergences from the interface document that the conformance suite did
// not catch, each checked over raw HTTP as a user's test would see it.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// "Bodies are JSON unless stated otherwise": a body holding a JSON value
// followed by anything but white space is not JSON text, so it is a bad
// argument (400) and nothing is charged, however valid its first value.
func TestSpecJSONBodyWithTrailingDataIs400(t *testing.T) {
	t.Parallel()
	c := newCF(t)
	sample := c.sample(cfBill, 12*time.Second)
	gen := `{"feature":"image/generation","args":{"prompt":"p"}}`
	clone := `{"name":"x","audio":"` + sample + `"}`
	upload := `{"bytes":5,"contentType":"text/plain"}`
	for _, tc := range []struct{ name, path, body string }{
		{"generation, text after the object", "/v3/generations", gen + ` xyz`},
		{"generation, a second object", "/v3/generations", gen + `{"feature":"image/ad"}`},
		{"generation, a stray bracket", "/v3/generations", gen + `]`},
		{"voice clone, text after the object", "/v3/voices", clone + ` 1`},
		{"upload URL, a stray bracket", "/v3/files/upload-url", upload + `]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := c.at(t)
			before := c.balance(cfBill)
			wantError(t, c.call(http.MethodPost, tc.path, cfBill, tc.body), http.StatusBadRequest, "invalid_argument")
			assert.Equal(t, before, c.balance(cfBill), "nothing is charged")
		})
	}
	t.Run("agent endpoint, a second message", func(t *testing.T) {
		c := c.at(t)
		msg := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, c.url+"/v3/mcp", strings.NewReader(msg+msg))
		require.NoError(t, err)
		req.Header.Set("Authorization", cfKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		wantError(t, c.send(req), http.StatusBadRequest, "invalid_argument")
	})
	t.Run("white space after the object is JSON text", func(t *testing.T) {
		c := c.at(t)
		r := c.call(http.MethodPost, "/v3/generations", cfBill, gen+" \r\n\t")
		assert.Equal(t, http.StatusOK, r.status, "%s", r)
	})
}
