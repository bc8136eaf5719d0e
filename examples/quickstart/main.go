// Quickstart: read the price of a logo reveal, upload a logo, submit the
// generation, wait for it and save the video and its poster under a folder
// (-out, default ./quickstart-output).
//
// With MEDIAGEN_API_KEY set it talks to the service (and spends money). With
// no key it starts an in-process reference server, so it runs anywhere:
//
//	go run ./examples/quickstart
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
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

// outputDir is where the video and its poster are saved.
var outputDir = "quickstart-output"

func main() {
	flag.StringVar(&outputDir, "out", outputDir, "folder to save the video and its poster in")
	flag.Parse()
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()

	var c *client.Client
	if os.Getenv("MEDIAGEN_API_KEY") == "" {
		// No key: serve the whole interface in-process. Its clients wait on
		// the test server's clock, so the default schedules cost no time.
		srv, err := clienttest.Start(clienttest.WithBalance(10))
		if err != nil {
			return err
		}
		defer srv.Close()
		c = srv.Client()
		fmt.Fprintln(out, "no MEDIAGEN_API_KEY: using an in-process reference server")
	} else {
		// The key and base URL come from MEDIAGEN_API_KEY and MEDIAGEN_BASE_URL.
		var err error
		if c, err = client.New(""); err != nil {
			return err
		}
	}

	args := client.LogoRevealArgs{
		Prompt:      "sparks gather into a burst of light over a dark stage",
		Mode:        client.ModeIntro,
		AspectRatio: client.Aspect16x9,
		Duration:    5,
	}

	prices, err := c.Pricing(ctx)
	if err != nil {
		return err
	}
	estimate, err := prices.Estimate(args)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "estimate: %s\n", estimate)

	pngBytes := logoPNG()
	logo, err := upload.Reader(ctx, c, bytes.NewReader(pngBytes), int64(len(pngBytes)), "image/png")
	if err != nil {
		return err
	}
	args.Image = logo.ID
	fmt.Fprintf(out, "uploaded logo: %s\n", logo.ID)

	g, err := c.CreateGeneration(ctx, args)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "submitted %s (%s), charged $%.4f\n", g.ID, g.Status, g.BalanceUsed)

	// Video is checked after 5 s, then up to every 10 s.
	g, err = poll.Generation(ctx, c, g.ID, poll.OnUpdate(func(g *mediagen.Generation) {
		fmt.Fprintf(out, "  status: %s\n", g.Status)
	}))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "done: %s, %dx%d, %d ms\n", g.Output.MIME, g.Output.Width, g.Output.Height, g.Output.DurationMs)

	// Assets expire with the generation (24 h): save them now.
	saved, err := c.SaveOutput(ctx, g, outputDir)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "saved %s\nsaved %s\n", saved.Path, saved.PosterPath)
	return nil
}

// logoPNG draws a small logo so the example needs no files.
func logoPNG() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 128, 128))
	for y := range 128 {
		for x := range 128 {
			dx, dy := x-64, y-64
			if dx*dx+dy*dy < 48*48 {
				img.Set(x, y, color.NRGBA{R: 230, G: 80, B: 40, A: 255})
			}
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}
