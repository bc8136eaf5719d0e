package batch_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/mediagen/mediagen-go/batch"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/poll"
)

func ExampleRun() {
	srv, err := clienttest.Start() // in-process reference server; use client.New("") for the service
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	// A journal shared across restarts makes a rerun resume: use
	// journal.Open on a SQLite or PostgreSQL database.
	c := srv.Client(client.WithJournal(journal.NewMemory()))

	dir, err := os.MkdirTemp("", "batch")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	var items []batch.Item
	for _, order := range []string{"order-1001", "order-1002", "order-1003"} {
		items = append(items, batch.Item{Key: order, Args: client.ImageGenerationArgs{Prompt: "a poster for " + order}})
	}
	res, err := batch.Run(context.Background(), c, items, batch.WithBudget(1), batch.WithConcurrency(16), batch.WithSaveTo(dir))
	if err != nil {
		log.Fatal(err) // over budget, bad input, or the context ended
	}
	for _, it := range res.Items {
		fmt.Println(it.Key, it.Generation.Status, it.Err == nil && it.SavedPath != "")
	}
	fmt.Printf("done %d of %d, spent %.2f USD\n", res.Done, len(items), res.Spent)
	// Output:
	// order-1001 done true
	// order-1002 done true
	// order-1003 done true
	// done 3 of 3, spent 0.12 USD
}

func ExampleWithPollOptions() {
	srv, err := clienttest.Start() // in-process reference server; use client.New("") for the service
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()

	items := []batch.Item{{Key: "order-2001", Args: client.ImageGenerationArgs{Prompt: "a kite"}}}
	// The run's options configure it; client options reach its requests
	// through WithClientOptions, and poll options its waits through
	// WithPollOptions. Given directly to Run, they do not compile.
	res, err := batch.Run(context.Background(), c, items,
		batch.WithConcurrency(4),
		batch.WithClientOptions(client.WithTimeout(30*time.Second), client.WithHeader("X-Job", "posters")),
		batch.WithPollOptions(poll.WithMaxWait(time.Hour)),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Done, "done")
	// Output: 1 done
}
