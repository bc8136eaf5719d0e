// Batch: upload product photos in one multipart request, price a batch of
// product shots and thumbnails against a budget, submit it, wait for all of
// it at once, and account for what failed and was refunded.
//
// With MEDIAGEN_API_KEY set it talks to the service (and spends money). With
// no key it starts an in-process reference server, so it runs anywhere:
//
//	go run ./examples/batch
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"log"
	"os"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/upload"
)

// budget is the most the batch may cost, in USD; a dearer batch is not sent.
const budget = 1.00

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()

	var c *client.Client
	var balance func() float64 // the service has no balance endpoint; the test server tells
	if os.Getenv("MEDIAGEN_API_KEY") == "" {
		// The two ways a batch comes back short: $0.20 covers the first four
		// requests but not the last ($0.075, even with the $0.05 refund of
		// the first thumbnail back), and every thumbnail render fails.
		srv, err := clienttest.Start(clienttest.WithBalance(0.20),
			clienttest.WithOutcome(func(feature mediagen.Feature) clienttest.Outcome {
				if feature == mediagen.FeatureImageYoutubeThumbnail {
					return clienttest.OutcomeError
				}
				return clienttest.OutcomeDone
			}))
		if err != nil {
			return err
		}
		defer srv.Close()
		c = srv.Client()
		balance = srv.Balance
		fmt.Fprintln(out, "no MEDIAGEN_API_KEY: using an in-process reference server")
	} else {
		var err error
		if c, err = client.New(""); err != nil {
			return err
		}
	}

	// One multipart request for all the photos (up to 10).
	var parts []upload.Part
	for i, name := range []string{"mug.png", "lamp.png", "vase.png"} {
		b := productPNG(color.NRGBA{R: uint8(200 - 70*i), G: uint8(60 + 50*i), B: 120, A: 255})
		parts = append(parts, upload.Part{Name: name, Reader: bytes.NewReader(b), Size: int64(len(b)), ContentType: "image/png"})
	}
	files, err := upload.Multipart(ctx, c, parts)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(out, "uploaded %s: %s, %d bytes\n", f.OriginalName, f.ID, f.Size)
	}

	// Typed arguments name their feature: a batch mixes them freely.
	batch := []client.Args{
		client.ProductShotArgs{Image: files[0].ID, Prompt: "on a marble counter in soft morning light"},
		client.ProductShotArgs{Image: files[1].ID, Prompt: "on a walnut desk beside an open notebook"},
		client.ProductShotArgs{Image: files[2].ID, Prompt: "on a sunlit windowsill with dried flowers"},
		client.YoutubeThumbnailArgs{Image: files[0].ID, Prompt: "Five ways to style a kitchen shelf"},
		client.YoutubeThumbnailArgs{Image: files[1].ID, Prompt: "A desk setup tour", FineDetails: true},
	}

	// Price the whole batch before sending any of it.
	prices, err := c.Pricing(ctx)
	if err != nil {
		return err
	}
	var total float64
	for _, r := range batch {
		e, err := prices.Estimate(r)
		if err != nil {
			return err
		}
		total += e.Max
	}
	fmt.Fprintf(out, "estimate: %d generations, $%.4f (budget $%.2f)\n", len(batch), total, budget)
	if total > budget {
		return fmt.Errorf("the batch costs $%.4f, over the budget of $%.2f", total, budget)
	}
	if balance != nil {
		fmt.Fprintf(out, "balance before: $%.4f\n", balance())
	}

	var ids []string
	for _, r := range batch {
		g, err := c.CreateGeneration(ctx, r)
		var short *client.InsufficientBalanceError
		if errors.As(err, &short) {
			// Nothing was charged; the rest waits for a top-up.
			fmt.Fprintf(out, "refused %s: costs $%.4f, balance $%.4f\n", r.Feature(), short.Required, short.Balance)
			break
		}
		if err != nil {
			return err
		}
		ids = append(ids, g.ID)
		fmt.Fprintf(out, "submitted %s %s\n", g.ID, g.Feature)
	}

	// One list request per round for the whole batch, not one GET per id.
	// Each result carries its own error; failed renders are examined below.
	results, _ := poll.Generations(ctx, c, ids)
	var paid float64
	for _, r := range results {
		g := r.Generation
		if g == nil || !g.Terminal() {
			return r.Err // the wait gave up, or the generation vanished
		}
		if g.Status == mediagen.GenerationStatusDone {
			paid += g.BalanceUsed
			fmt.Fprintf(out, "  %s %s done: %s\n", g.ID, g.Feature, g.Output.MIME)
		} else {
			// Failed renders are refunded, so they can simply be sent again.
			fmt.Fprintf(out, "  %s %s %s: %s (refunded $%.4f)\n", g.ID, g.Feature, g.Status, g.Error, g.BalanceUsed)
		}
	}
	fmt.Fprintf(out, "paid $%.4f for what was done\n", paid)
	if balance != nil {
		fmt.Fprintf(out, "balance after: $%.4f\n", balance())
	}
	return nil
}

// productPNG draws a stand-in product photo so the example needs no files.
func productPNG(col color.NRGBA) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 256, 256))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(img, image.Rect(80, 60, 176, 210), image.NewUniform(col), image.Point{}, draw.Src)
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}
