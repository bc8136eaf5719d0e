package client_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/journal"
)

// dateShift moves the Date of every answer by d: a service whose front
// end's clock runs d ahead of the clock that dates its rows.
type dateShift struct {
	next http.RoundTripper
	d    time.Duration
}

func (s dateShift) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if t, perr := http.ParseTime(resp.Header.Get("Date")); perr == nil {
		resp.Header.Set("Date", t.Add(s.d).UTC().Format(http.TimeFormat))
	}
	return resp, nil
}

// createImages creates n images of distinct prompts through c, as a client
// does before its first ambiguous failure, and returns what they cost.
func createImages(t *testing.T, c *client.Client, n int) float64 {
	t.Helper()
	var spent float64
	for i := range n {
		g, err := c.CreateGeneration(t.Context(), asArgs(t, mediagen.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: fmt.Sprint("kite ", i)}))
		require.NoError(t, err)
		spent += g.BalanceUsed
	}
	return spent
}

func TestLostAnswerFoundWhenRowsLagTheServiceDate(t *testing.T) {
	srv, clean, ctx := setup(t)
	before := srv.Balance()
	// Rows dated 5 s behind the Date header: a fixed 3 s margin would look
	// past the lost answer's row and create a second generation.
	const learn = 20
	drop := &dropOnce{next: dateShift{loopback(t), 5 * time.Second}, method: http.MethodPost, path: "/v3/generations", skip: learn}
	c := srv.Client(client.WithHTTPClient(&http.Client{Transport: drop}))
	spent := createImages(t, c, learn)

	g, err := c.CreateGeneration(ctx, asArgs(t, mediagen.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: "a red kite"}))
	require.NoError(t, err)
	require.True(t, drop.dropped)

	page, err := clean.ListGenerations(ctx, client.ListParams{Limit: 100})
	require.NoError(t, err)
	assert.Len(t, page.Generations, learn+1, "the lost answer's generation found, not created again")
	assert.InDelta(t, before-spent-g.BalanceUsed, srv.Balance(), 1e-9, "charged once")
}

func TestLostAnswerNotMistakenForATwinSecondsOlder(t *testing.T) {
	srv, clean, ctx := setup(t)
	const learn = 20
	drop := &dropOnce{next: loopback(t), method: http.MethodPost, path: "/v3/generations", skip: learn}
	c := srv.Client(client.WithHTTPClient(&http.Client{Transport: drop}))
	createImages(t, c, learn) // shows the service's clocks agree

	// Another caller's generation of the same arguments, 3 s older than
	// ours: inside a fixed 3 s margin, outside the learned one.
	args := client.ImageGenerationArgs{Prompt: "a red kite"}
	twin, err := clean.CreateGeneration(ctx, asArgs(t, mediagen.FeatureImageGeneration, args))
	require.NoError(t, err)
	srv.Advance(3 * time.Second)

	g, err := c.CreateGeneration(ctx, asArgs(t, mediagen.FeatureImageGeneration, args))
	require.NoError(t, err)
	require.True(t, drop.dropped)
	assert.NotEqual(t, twin.ID, g.ID, "the twin stays its caller's")
	page, err := clean.ListGenerations(ctx, client.ListParams{Limit: 100})
	require.NoError(t, err)
	assert.Len(t, page.Generations, learn+2, "ours was found, not created again")
}

// A key taken over from a dead holder is searched with the lag the client
// learned, as a lost answer is: a fixed 3 s margin would look past the
// holder's generation on a service dating rows 5 s behind its Date header,
// and charge the key twice.
func TestTakeoverFindsTheHoldersRowWhenRowsLagTheServiceDate(t *testing.T) {
	srv, _, ctx := setup(t)
	j := journal.NewMemory()
	c := srv.Client(client.WithJournal(j), client.WithJournalHold(2*time.Second),
		client.WithHTTPClient(&http.Client{Transport: dateShift{loopback(t), 5 * time.Second}}))
	createImages(t, c, 20)

	args := client.ImageGenerationArgs{Prompt: "left behind"}
	start := srv.Now()
	sent, err := srv.Client().CreateGeneration(ctx, args) // the dead holder's send
	require.NoError(t, err)
	fp := recordedFingerprint(t, srv, args)
	_, _, err = j.Claim(ctx, journal.Record{Key: "k", Op: "generation", Feature: "image/generation", Fingerprint: fp,
		Holder: "dead", HeldUntil: time.Now().Add(-time.Millisecond), Started: start, Created: start})
	require.NoError(t, err)
	before := srv.Balance()

	g, err := c.CreateGeneration(ctx, args, client.WithIdempotencyKey("k"))
	require.NoError(t, err)
	assert.Equal(t, sent.ID, g.ID, "found, not sent again")
	assert.Equal(t, before, srv.Balance(), "charged once for the key")
}
