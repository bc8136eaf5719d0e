package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
)

var colourKey = client.NewKey("example.WithColour", func(s string) error {
	if s == "" {
		return errors.New("needs a colour")
	}
	return nil
})

func TestKeyCarriesAPackagesOption(t *testing.T) {
	v, ok, err := colourKey.Get(nil)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Empty(t, v)

	opts := []client.Option{client.WithTimeout(time.Second), colourKey.Option("red"), colourKey.Option("teal")}
	v, ok, err = colourKey.Get(opts)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "teal", v, "the last value wins")

	// Every invalid option of the list is reported, the key's and the
	// client's alike; the valid ones still apply.
	v, ok, err = colourKey.Get([]client.Option{colourKey.Option(""), client.WithTimeout(-time.Second), colourKey.Option("blue")})
	assert.ErrorContains(t, err, "example.WithColour: needs a colour")
	assert.ErrorContains(t, err, "WithTimeout")
	assert.True(t, ok)
	assert.Equal(t, "blue", v)

	// New-only options fail in a call's list, as they do on a call.
	_, _, err = colourKey.Get([]client.Option{client.WithBaseURL("https://elsewhere.example")})
	assert.ErrorContains(t, err, "WithBaseURL")
}

// A client call ignores the keys it does not read, so one list can go to a
// package's function and to every call it makes; a key's invalid value
// still fails the call.
func TestClientCallsIgnoreKeys(t *testing.T) {
	srv := clienttest.NewServer(t)
	c := srv.Client()
	ctx := context.Background()
	var resp *http.Response
	_, err := c.Pricing(ctx, colourKey.Option("red"), client.WithResponseInto(&resp))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = c.Pricing(ctx, colourKey.Option(""))
	assert.ErrorContains(t, err, "example.WithColour")
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
