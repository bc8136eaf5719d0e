package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mediagen/mediagen-go/client"
)

// The client's cost is measured against the floor: the same request made
// with net/http and decoded with encoding/json. Compare the pairs, e.g.
//
//	go test -run '^$' -bench 'GetGeneration|ListGenerations' -benchmem ./client/
//
// Both sides talk to the same in-process reference server, whose own work is
// most of each number; the difference is what the client adds.

func benchServer(b *testing.B) (*testServer, *client.Client, string) {
	srv := newTestServer(b)
	c := srv.Client()
	g, err := c.CreateGeneration(context.Background(), client.ImageGenerationArgs{Prompt: "a lighthouse at dusk"})
	if err != nil {
		b.Fatal(err)
	}
	for range 30 {
		if _, err := c.CreateGeneration(context.Background(), client.ImageGenerationArgs{Prompt: "filler"}); err != nil {
			b.Fatal(err)
		}
	}
	return srv, c, g.ID
}

func BenchmarkGetGenerationClient(b *testing.B) {
	_, c, id := benchServer(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.GetGeneration(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetGenerationRawHTTP(b *testing.B) {
	srv, _, id := benchServer(b)
	hc := srv.HTTP.Client()
	b.ReportAllocs()
	for b.Loop() {
		var env struct{ Generation client.Generation }
		rawGet(b, hc, srv.URL+"/v3/generations/"+id, srv.APIKey, &env)
	}
}

func BenchmarkListGenerationsClient(b *testing.B) {
	_, c, _ := benchServer(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.ListGenerations(ctx, client.ListParams{Limit: 24}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListGenerationsRawHTTP(b *testing.B) {
	srv, _, _ := benchServer(b)
	hc := srv.HTTP.Client()
	b.ReportAllocs()
	for b.Loop() {
		var page struct {
			Generations []client.Generation
			NextCursor  *string
		}
		rawGet(b, hc, srv.URL+"/v3/generations?limit=24", srv.APIKey, &page)
	}
}

func rawGet(b *testing.B, hc *http.Client, url, key string, into any) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", key)
	resp, err := hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("status %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		b.Fatal(err)
	}
}
