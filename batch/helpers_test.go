package batch_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/batch"
	"github.com/mediagen/mediagen-go/client"
)

// images returns n image items; each prompt is its key, so the server's
// generations can be counted per key.
func images(prefix string, n int) []batch.Item {
	items := make([]batch.Item, n)
	for i := range items {
		key := fmt.Sprintf("%s-%03d", prefix, i)
		items[i] = batch.Item{Key: key, Args: client.ImageGenerationArgs{Prompt: key}}
	}
	return items
}

// creates counts the create requests a client sends (every attempt): in
// total, at most at once, and by the status answered.
type creates struct {
	mu       sync.Mutex
	total    int
	inFlight int
	max      int
	answers  map[int]int // by status
}

func isCreate(req *http.Request) bool {
	return req.Method == http.MethodPost && req.URL.Path == "/v3/generations"
}

// middleware counts the creates passing through it.
func (cr *creates) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if !isCreate(req) {
		return next(req)
	}
	cr.mu.Lock()
	cr.total++
	cr.inFlight++
	cr.max = max(cr.max, cr.inFlight)
	cr.mu.Unlock()
	resp, err := next(req)
	cr.mu.Lock()
	cr.inFlight--
	if cr.answers == nil {
		cr.answers = map[int]int{}
	}
	if err == nil {
		cr.answers[resp.StatusCode]++
	}
	cr.mu.Unlock()
	return resp, err
}

func (cr *creates) counts() (total, maxInFlight int) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return cr.total, cr.max
}

// perPrompt counts the server's generations by prompt.
func perPrompt(t *testing.T, c *client.Client) map[string]int {
	t.Helper()
	n := map[string]int{}
	for g, err := range c.Generations(t.Context(), client.ListParams{Limit: 100}) {
		require.NoError(t, err)
		p, _ := g.Params["prompt"].(string)
		n[p]++
	}
	return n
}

// requireOnceEach fails unless the server holds exactly one generation
// for each item's key and no other.
func requireOnceEach(t *testing.T, c *client.Client, items []batch.Item) {
	t.Helper()
	got := perPrompt(t, c)
	want := map[string]int{}
	for _, it := range items {
		want[it.Key] = 1
	}
	require.Equal(t, want, got, "generations per key on the server")
}
