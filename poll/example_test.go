package poll_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
)

func ExampleGeneration() {
	// An in-process test server; a real program calls client.New("").
	srv, err := clienttest.Start()
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

	g, err = poll.Generation(ctx, c, g.ID,
		// Renders take milliseconds on the in-process server; against the
		// service, leave WithInterval out and the schedule by kind applies.
		poll.WithInterval(50*time.Millisecond),
		poll.OnUpdate(func(g *mediagen.Generation) { fmt.Println("status:", g.Status) }),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(g.Status, g.Output.MIME)
	// Output:
	// status: pending
	// status: running
	// status: done
	// done image/png
}

func ExampleWithClientOptions() {
	// An in-process test server; a real program calls client.New("").
	srv, err := clienttest.Start()
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

	// Poll options configure the wait; client options reach its requests
	// only through WithClientOptions. A client option given directly to the
	// wait, or a poll option given to a client call, does not compile.
	g, err = poll.Generation(ctx, c, g.ID,
		poll.WithInterval(50*time.Millisecond), // for the in-process server only
		poll.WithMaxWait(time.Hour),
		poll.WithClientOptions(client.WithTimeout(10*time.Second), client.WithHeader("X-Job", "nightly-7")),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(g.Status)
	// Output:
	// done
}

func ExampleGenerations() {
	// An in-process test server; a real program calls client.New("").
	srv, err := clienttest.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()
	var ids []string
	for _, prompt := range []string{"a fox", "a heron", "a lynx"} {
		g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: prompt})
		if err != nil {
			log.Fatal(err)
		}
		ids = append(ids, g.ID)
	}

	// One list request per round checks all three; the interval suits the
	// in-process server only.
	results, err := poll.Generations(ctx, c, ids, poll.WithInterval(50*time.Millisecond))
	if err != nil {
		log.Print(err) // joins the error of each generation that did not end done
	}
	for _, r := range results { // one per id, in the order of ids
		if r.Err != nil {
			continue // a *poll.FailedError, *poll.GoneError or *poll.GaveUpError naming r.ID
		}
		fmt.Println(r.Generation.Params["prompt"], r.Generation.Status)
	}
	// Output:
	// a fox done
	// a heron done
	// a lynx done
}

func ExampleFailedError() {
	// A test server where every render fails; a real program calls client.New.
	srv, err := clienttest.Start(clienttest.WithOutcome(func(mediagen.Feature) clienttest.Outcome { return clienttest.OutcomeError }))
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

	// The interval suits the in-process server only.
	_, err = poll.Generation(ctx, c, g.ID, poll.WithInterval(50*time.Millisecond))
	var failed *poll.FailedError
	if errors.As(err, &failed) {
		// The message names the generation id; print what follows it.
		_, rest, _ := strings.Cut(failed.Error(), failed.Generation.ID+" ")
		fmt.Println(failed.Generation.Status)
		fmt.Println(rest)
	}
	// Output:
	// error
	// ended with status error: render failed; the charge was refunded, so retrying is safe
}
