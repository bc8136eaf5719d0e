package client_test

import (
	"fmt"
	"net/http"
	"sync"
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
	return s.shift(resp), nil
}

func (s dateShift) shift(resp *http.Response) *http.Response {
	if t, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		resp.Header.Set("Date", t.Add(s.d).UTC().Format(http.TimeFormat))
	}
	return resp
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

// A lost create's generation is found, not created again, on services
// whose clocks a fixed 3 s margin misjudges: the client learns how far
// back to search from the rows it created before.
func TestLostAnswerFoundWhenServiceClocksDisagree(t *testing.T) {
	for name, service := range map[string]func(http.RoundTripper) http.RoundTripper{
		// Rows dated 5 s behind the Date header.
		"rows lag the Date": func(next http.RoundTripper) http.RoundTripper { return dateShift{next, 5 * time.Second} },
		// Every row looks dated on time by the replica that answered, but
		// the lost create's row was dated by the replica 3 s behind the
		// one that lists: a margin learned from the rows alone would look
		// past it.
		"replicas apart": func(next http.RoundTripper) http.RoundTripper {
			return &stickyReplicas{next: next, d: 3 * time.Second, alternate: 1 << 30}
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv, clean, ctx := setup(t)
			before := srv.Balance()
			const learn = 20
			drop := &dropOnce{next: service(loopback(t)), method: http.MethodPost, path: "/v3/generations", skip: learn}
			c := srv.Client(client.WithHTTPClient(&http.Client{Transport: drop}))
			spent := createImages(t, c, learn)

			g, err := c.CreateGeneration(ctx, asArgs(t, mediagen.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: "a red kite"}))
			require.NoError(t, err)
			require.True(t, drop.dropped)

			page, err := clean.ListGenerations(ctx, client.ListParams{Limit: 100})
			require.NoError(t, err)
			assert.Len(t, page.Generations, learn+1, "the lost answer's generation found, not created again")
			assert.InDelta(t, before-spent-g.BalanceUsed, srv.Balance(), 1e-9, "charged once")
		})
	}
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
	sent := deadHolderSent(t, srv, j, "k", args)
	before := srv.Balance()

	g, err := c.CreateGeneration(ctx, args, client.WithIdempotencyKey("k"))
	require.NoError(t, err)
	assert.Equal(t, sent.ID, g.ID, "found, not sent again")
	assert.Equal(t, before, srv.Balance(), "charged once for the key")
}

// countLists counts the list requests that pass through it.
type countLists struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    int
}

func (c *countLists) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && r.URL.Path == "/v3/generations" {
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
	}
	return c.next.RoundTrip(r)
}

// In a burst of creates, a lost answer's search reads only the rows
// requested since its attempt began, as the client's recent rows place it
// on the service's clock, not the second or two more the Date header's
// rounding leaves: here one page instead of two.
func TestLostAnswerSearchReadsOnlyTheBurstSinceTheAttempt(t *testing.T) {
	srv, clean, ctx := setup(t)
	const learn = 20
	lists := &countLists{next: loopback(t)}
	drop := &dropOnce{next: lists, method: http.MethodPost, path: "/v3/generations", skip: learn}
	c := srv.Client(client.WithHTTPClient(&http.Client{Transport: drop}))
	srv.Advance(250 * time.Millisecond) // rows dated in fractions of a second
	createImages(t, c, learn)
	for i := range 150 { // other callers' burst, half a second before our attempt
		_, err := clean.CreateGeneration(ctx, asArgs(t, mediagen.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: fmt.Sprint("gull ", i)}))
		require.NoError(t, err)
	}
	// Half a second on the server's clock, and 100 ms on the real one: the
	// client reads the time since its rows on both and takes the lesser.
	srv.Advance(500 * time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	before := srv.Balance()

	g, err := c.CreateGeneration(ctx, asArgs(t, mediagen.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: "a red kite"}))
	require.NoError(t, err)
	require.True(t, drop.dropped)
	assert.Equal(t, 1, lists.n, "one page of the search")
	assert.InDelta(t, before-g.BalanceUsed, srv.Balance(), 1e-9, "found, not created again")
}
