package poll_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/refserver"
	"github.com/mediagen/mediagen-go/poll"
)

// startExampleServer runs the reference server in-process, so the examples
// need no account; a real program passes its own key and the service URL.
// Renders take a twentieth of their real time: an image is done in 400 ms,
// after 40 ms pending, so a wait checking every 50 ms sees each status.
func startExampleServer(opts ...refserver.Option) (baseURL, apiKey string, stop func()) {
	const key = "mg_example_key_0001"
	opts = append([]refserver.Option{refserver.WithProject(key, 10), refserver.WithRenderScale(0.05)}, opts...)
	ref := refserver.New(opts...)
	hs := httptest.NewServer(ref)
	return hs.URL, key, func() { hs.Close(); ref.Close() }
}

// startFailingExampleServer is startExampleServer with every render failing.
func startFailingExampleServer() (baseURL, apiKey string, stop func()) {
	return startExampleServer(refserver.WithOutcome(func(string) refserver.Outcome { return refserver.OutcomeError }))
}

func ExampleGeneration() {
	baseURL, apiKey, stop := startExampleServer()
	defer stop()
	c, err := client.New(apiKey, client.WithBaseURL(baseURL))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	g, err := c.CreateGeneration(ctx, client.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: "a lighthouse at dusk"})
	if err != nil {
		log.Fatal(err)
	}

	g, err = poll.Generation(ctx, c, g.Id,
		// Renders take milliseconds on the in-process server; against the
		// service, leave WithInterval out and the schedule by kind applies.
		poll.WithInterval(50*time.Millisecond),
		poll.OnUpdate(func(g *client.Generation) { fmt.Println("status:", g.Status) }),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(g.Status, g.Output.Mime)
	// Output:
	// status: pending
	// status: running
	// status: done
	// done image/png
}

func ExampleGenerations() {
	baseURL, apiKey, stop := startExampleServer()
	defer stop()
	c, err := client.New(apiKey, client.WithBaseURL(baseURL))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	var ids []string
	for _, prompt := range []string{"a fox", "a heron", "a lynx"} {
		g, err := c.CreateGeneration(ctx, client.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: prompt})
		if err != nil {
			log.Fatal(err)
		}
		ids = append(ids, g.Id)
	}

	// One list request per round checks all three; the interval suits the
	// in-process server only.
	gens, err := poll.Generations(ctx, c, ids, poll.WithInterval(50*time.Millisecond))
	if err != nil {
		log.Fatal(err) // joins one error per generation that did not end done
	}
	for _, g := range gens { // in the order of ids
		fmt.Println(g.Params["prompt"], g.Status)
	}
	// Output:
	// a fox done
	// a heron done
	// a lynx done
}

func ExampleFailedError() {
	baseURL, apiKey, stop := startFailingExampleServer() // every render fails
	defer stop()
	c, err := client.New(apiKey, client.WithBaseURL(baseURL))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	g, err := c.CreateGeneration(ctx, client.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: "a lighthouse at dusk"})
	if err != nil {
		log.Fatal(err)
	}

	// The interval suits the in-process server only.
	_, err = poll.Generation(ctx, c, g.Id, poll.WithInterval(50*time.Millisecond))
	var failed *poll.FailedError
	if errors.As(err, &failed) {
		// The message names the generation id; print what follows it.
		_, rest, _ := strings.Cut(failed.Error(), failed.Generation.Id+" ")
		fmt.Println(failed.Generation.Status)
		fmt.Println(rest)
	}
	// Output:
	// error
	// ended with status error: render failed; the charge was refunded, so retrying is safe (its charge was refunded)
}
