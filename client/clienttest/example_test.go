package clienttest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
)

// A program, or an Example function, starts the server with Start and
// closes it; a test would call clienttest.NewServer(t) instead.
func ExampleStart() {
	srv, err := clienttest.Start(clienttest.WithBalance(5))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a lighthouse at dusk"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("submitted:", g.Status)

	// poll's default schedule, with no clock work: each wait moves the
	// server's clock instead of sleeping, so this returns at once.
	g, err = poll.Generation(ctx, c, g.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("waited:", g.Status, g.Output.MIME)
	fmt.Printf("balance: %.2f USD\n", srv.Balance())
	// Output:
	// submitted: pending
	// waited: done image/png
	// balance: 4.96 USD
}

// Advance moves the server's clock: renders progress, and generations
// expire 24 hours after their request.
func ExampleServer_Advance() {
	srv, err := clienttest.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a red fox in fresh snow"})
	if err != nil {
		log.Fatal(err)
	}
	srv.Advance(time.Minute)
	if g, err = c.GetGeneration(ctx, g.ID); err != nil {
		log.Fatal(err)
	}
	fmt.Println("after a minute:", g.Status)

	srv.Advance(24 * time.Hour)
	_, err = c.GetGeneration(ctx, g.ID)
	fmt.Println("a day later, not found:", errors.Is(err, client.ErrNotFound))
	// Output:
	// after a minute: done
	// a day later, not found: true
}

// Faults make the server misbehave as the real service sometimes does; the
// client's retries and the refunds can be checked against them.
func ExampleWithFaults() {
	srv, err := clienttest.Start(clienttest.WithFaults(clienttest.Faults{
		Seed:           1,
		RenderError:    1, // every render fails, and is refunded
		RenderFeatures: []mediagen.Feature{mediagen.FeatureImageGeneration},
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a paper boat"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = poll.Generation(ctx, c, g.ID)
	var failed *poll.FailedError
	fmt.Println("failed:", errors.As(err, &failed))
	fmt.Printf("balance: %.2f USD, render errors: %d\n", srv.Balance(), srv.FaultCounts().RenderErrors)
	// Output:
	// failed: true
	// balance: 100.00 USD, render errors: 1
}
