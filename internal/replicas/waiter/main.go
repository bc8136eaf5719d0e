// Command waiter is the replica that waits, for the replicas test: it
// creates -n generations of mixed kinds (images, voiceovers with a catalog
// voice, logo reveals of an uploaded PNG) against MEDIAGEN_BASE_URL, sending
// their webhooks to the receivers of -receivers in turn, and waits on each
// with its own hub.Hub, which learns of the events only through the
// hub.SQLExchange in the database of -dialect and -dsn. It prints
// "wait <id> <kind> <status> <unix ns at return>" for each wait, then
// "requests generations <n>" (creates, GETs and lists of generations) and
// "requests other <n>" (the voice list and the upload).
package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	_ "modernc.org/sqlite"             // registers "sqlite"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/upload"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "waiter:", err)
		os.Exit(1)
	}
}

func run() error {
	dialect := flag.String("dialect", "sqlite", "shared database: sqlite or postgres")
	dsn := flag.String("dsn", "", "shared database DSN")
	receivers := flag.String("receivers", "", "comma-separated webhook URLs, used in turn")
	n := flag.Int("n", 60, "generations to create and wait on")
	flag.Parse()
	urls := strings.Split(*receivers, ",")
	if *receivers == "" {
		return errors.New("no -receivers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	d, driver := mediagen.SQLite, "sqlite"
	if *dialect == "postgres" {
		d, driver = mediagen.PostgreSQL, "pgx"
	}
	db, err := sql.Open(driver, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	x, err := hub.OpenSQLExchange(ctx, db, d)
	if err != nil {
		return err
	}
	h, err := hub.New(hub.WithExchange(x, 0, func(err error) { fmt.Fprintln(os.Stderr, "waiter:", err) }))
	if err != nil {
		return err
	}
	defer h.Close()

	var genRequests, otherRequests atomic.Int64
	count := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if strings.HasPrefix(req.URL.Path, "/v3/generations") {
			genRequests.Add(1)
		} else {
			otherRequests.Add(1)
		}
		return next(req)
	}
	c, err := client.New("", client.WithMiddleware(count))
	if err != nil {
		return err
	}

	voices, err := c.Voices(ctx, client.VoiceFilter{Owner: mediagen.VoiceOwnerService})
	if err != nil {
		return err
	}
	if len(voices) == 0 {
		return errors.New("no catalog voice")
	}
	logo := logoPNG()
	file, err := upload.Reader(ctx, c, bytes.NewReader(logo), int64(len(logo)), "image/png")
	if err != nil {
		return err
	}

	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range *n {
		var args client.Args
		switch i % 3 {
		case 0:
			args = client.ImageGenerationArgs{Prompt: fmt.Sprintf("a lighthouse at dusk, take %d", i)}
		case 1:
			args = client.VoiceoverArgs{VoiceID: voices[0].ID, Script: fmt.Sprintf("Welcome aboard; this is announcement number %d.", i)}
		case 2:
			args = client.LogoRevealArgs{Image: file.ID, Prompt: fmt.Sprintf("sparks gather into the logo, take %d", i)}
		}
		g, err := c.CreateGeneration(ctx, args, client.WithWebhookURL(urls[i%len(urls)]))
		if err != nil {
			return fmt.Errorf("create %d: %w", i, err)
		}
		wg.Go(func() {
			got, err := poll.Generation(ctx, c, g.ID, poll.WithHub(h), poll.WithKind(g.Kind))
			at := time.Now()
			status := mediagen.GenerationStatus("none")
			if got != nil {
				status = got.Status
			}
			mu.Lock()
			defer mu.Unlock()
			fmt.Printf("wait %s %s %s %d\n", g.ID, g.Kind, status, at.UnixNano())
			if err != nil {
				fmt.Fprintf(os.Stderr, "waiter: %s: %v\n", g.ID, err)
			}
		})
	}
	wg.Wait()
	fmt.Printf("requests generations %d\nrequests other %d\n", genRequests.Load(), otherRequests.Load())
	return nil
}

// logoPNG draws a small logo.
func logoPNG() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 64 {
			if dx, dy := x-32, y-32; dx*dx+dy*dy < 24*24 {
				img.Set(x, y, color.NRGBA{R: 40, G: 90, B: 230, A: 255})
			}
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}
