package client_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
)

// CheckOptions reports what a call would fail with: every invalid option,
// joined, and the options that belong to New; it accepts what a call
// accepts, per-call-only options included, and skips nil ones.
func TestCheckOptions(t *testing.T) {
	require.NoError(t, client.CheckOptions())
	var resp *http.Response
	require.NoError(t, client.CheckOptions(nil, client.WithTimeout(time.Second), client.WithHeader("X-Job", "7"),
		client.WithIdempotencyKey("order-7"), client.WithResponseInto(&resp)))

	err := client.CheckOptions(client.WithTimeout(-time.Second), client.WithMaxRetries(2), client.WithHeader("Host", "x"))
	assert.ErrorContains(t, err, "WithTimeout")
	assert.ErrorContains(t, err, "WithHeader(Host)")

	err = client.CheckOptions(client.WithBaseURL("https://elsewhere.example"), client.WithJournalHold(time.Hour))
	assert.ErrorContains(t, err, "WithBaseURL")
	assert.ErrorContains(t, err, "WithJournalHold")
	assert.ErrorIs(t, client.CheckOptions(client.WithIdempotencyKey("")), client.ErrInvalidArgument)
}

// CheckSharedOptions, for options applied to many calls, also refuses the
// options of one call.
func TestCheckSharedOptions(t *testing.T) {
	var resp *http.Response
	require.NoError(t, client.CheckSharedOptions(client.WithTimeout(time.Second), client.WithHeader("X-Run", "7")))
	err := client.CheckSharedOptions(client.WithIdempotencyKey("k"), client.WithResponseInto(&resp), client.WithTimeout(-1))
	assert.ErrorContains(t, err, "WithIdempotencyKey applies to one call")
	assert.ErrorContains(t, err, "WithResponseInto applies to one call")
	assert.ErrorContains(t, err, "WithTimeout")
	require.NoError(t, client.CheckOptions(client.WithIdempotencyKey("k"), client.WithResponseInto(&resp)), "one call takes them")
}

func TestWithClock(t *testing.T) {
	clk := newTestClock()
	c, err := client.New("key", client.WithBaseURL("http://127.0.0.1:1"), client.WithClock(clk))
	require.NoError(t, err)
	assert.Same(t, clk, c.Clock())
	other := newTestClock()
	assert.Same(t, other, c.Clock(client.WithClock(other)), "a call's clock")
	assert.Same(t, clk, c.Clock(client.WithTimeout(-1)), "an invalid list leaves the client's")
	_, err = client.New("key", client.WithBaseURL("http://127.0.0.1:1"), client.WithClock(nil))
	assert.ErrorContains(t, err, "WithClock")
}
