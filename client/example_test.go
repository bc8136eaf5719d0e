package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
)

// startExampleServer runs the reference server in-process (package
// clienttest), so the examples need no account; a real program passes its
// own key and the service URL, or sets MEDIAGEN_API_KEY.
func startExampleServer() (baseURL, apiKey string, stop func()) {
	srv, err := clienttest.Start()
	if err != nil {
		log.Fatal(err)
	}
	return srv.URL(), srv.APIKey(), srv.Close
}

func ExampleNew() {
	baseURL, apiKey, stop := startExampleServer()
	defer stop()

	// With MEDIAGEN_API_KEY and MEDIAGEN_BASE_URL set, client.New("") is enough.
	c, err := client.New(apiKey, client.WithBaseURL(baseURL))
	if err != nil {
		log.Fatal(err)
	}
	prices, err := c.Pricing(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("an image costs %g USD per %s\n", prices[mediagen.FeatureImageGeneration].Price, prices[mediagen.FeatureImageGeneration].Unit)
	// Output: an image costs 0.04 USD per call
}

func ExampleClient_CreateGeneration() {
	baseURL, apiKey, stop := startExampleServer()
	defer stop()
	c, err := client.New(apiKey, client.WithBaseURL(baseURL))
	if err != nil {
		log.Fatal(err)
	}

	g, err := c.CreateGeneration(context.Background(), client.ImageGenerationArgs{
		Prompt:      "a lighthouse at dusk, oil painting",
		AspectRatio: client.Aspect16x9,
		FineDetails: true,
	})
	if err != nil {
		log.Fatal(err) // nothing was charged
	}
	fmt.Println(g.Kind, g.Status, g.BalanceUsed)
	// Output: image pending 0.06
}

func ExampleClient_Generations() {
	baseURL, apiKey, stop := startExampleServer()
	defer stop()
	c, err := client.New(apiKey, client.WithBaseURL(baseURL))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for _, prompt := range []string{"a fox", "a heron", "a lynx"} {
		if _, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: prompt}); err != nil {
			log.Fatal(err)
		}
	}

	// Pages of two are fetched as the loop goes, newest first.
	for g, err := range c.Generations(ctx, client.ListParams{Feature: mediagen.FeatureImageGeneration, Limit: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(g.Params["prompt"])
	}
	// Output:
	// a lynx
	// a heron
	// a fox
}

func ExamplePricing_Estimate() {
	baseURL, apiKey, stop := startExampleServer()
	defer stop()
	c, err := client.New(apiKey, client.WithBaseURL(baseURL))
	if err != nil {
		log.Fatal(err)
	}
	prices, err := c.Pricing(context.Background())
	if err != nil {
		log.Fatal(err)
	}

	reveal, err := prices.Estimate(client.LogoRevealArgs{
		Image: "file_logo", Prompt: "sparks", Duration: 8, Resolution: client.Resolution1080p,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reveal)

	// An avatar clip's length is known only after rendering: a range.
	avatar, err := prices.Estimate(client.AvatarArgs{
		VoiceID: "ava", Script: strings.Repeat("Welcome to the show. ", 12),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(avatar)
	fmt.Printf("between %g and %g USD\n", avatar.Min, avatar.Max)
	// Output:
	// video/logo-reveal: 0.1 USD/second × 1.5 (resolution=1080p) × 8 seconds = 1.2 USD
	// video/avatar: 0.5 USD/15s × 1 (resolution=720p, default) × 1–2 started 15 s = 0.5–1 USD
	// between 0.5 and 1 USD
}

// Outputs expire with their generation, 24 hours after the request:
// SaveOutput keeps a video and its poster under a folder.
func ExampleClient_SaveOutput() {
	srv, err := clienttest.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client() // a real program: client.New("")
	ctx := context.Background()

	g, err := c.CreateGeneration(ctx, client.AvatarArgs{
		VoiceID: "ava-warm-narrator", Script: "Welcome back to the channel.", PermissionConfirmed: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	if g, err = poll.Generation(ctx, c, g.ID); err != nil {
		log.Fatal(err)
	}

	dir, err := os.MkdirTemp("", "outputs")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	saved, err := c.SaveOutput(ctx, g, dir)
	if err != nil {
		log.Fatal(err)
	}
	// Files are named after the generation id: <id>.mp4, <id>.poster.png.
	fmt.Println(strings.TrimPrefix(filepath.Base(saved.Path), g.ID))
	fmt.Println(strings.TrimPrefix(filepath.Base(saved.PosterPath), g.ID))
	// Output:
	// .mp4
	// .poster.png
}
