// Blobsave: keep every finished output in blob storage as the waits end,
// through gocloud.dev/blob, so S3, Google Cloud Storage, Azure or a folder
// work alike without this SDK importing their SDKs. poll.WithSaveFunc hands
// each output to a writer the program opens; here a bucket's.
//
// This example is a module of its own, so its storage libraries never reach
// the SDK's go.mod. Run it from this folder:
//
//	go run .                                  # an in-process reference server, a folder bucket under ./blobsave-bucket
//	MEDIAGEN_BUCKET=mem:// go run .           # a bucket in memory
//
// For S3 or GCS, import gocloud.dev/blob/s3blob or gcsblob and set
// MEDIAGEN_BUCKET to s3://name?region=... or gs://name.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// buckets
	_ "gocloud.dev/blob/memblob"  // mem:// buckets

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()

	var c *client.Client
	if os.Getenv("MEDIAGEN_API_KEY") == "" {
		srv, err := clienttest.Start()
		if err != nil {
			return err
		}
		defer srv.Close()
		c = srv.Client()
		fmt.Fprintln(out, "no MEDIAGEN_API_KEY: using an in-process reference server")
	} else {
		var err error
		if c, err = client.New(""); err != nil {
			return err
		}
	}

	bucketURL := os.Getenv("MEDIAGEN_BUCKET")
	if bucketURL == "" {
		dir, err := filepath.Abs("blobsave-bucket")
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		bucketURL = "file://" + filepath.ToSlash(dir)
	}
	bucket, err := blob.OpenBucket(ctx, bucketURL)
	if err != nil {
		return err
	}
	defer bucket.Close()

	// Each output goes to <generation id>/<output or poster>; the object is
	// committed when the writer closes, so a failed transfer leaves nothing.
	save := func(ctx context.Context, g *mediagen.Generation, name, mediaType string) (io.WriteCloser, error) {
		return bucket.NewWriter(ctx, g.ID+"/"+name, &blob.WriterOptions{ContentType: mediaType})
	}

	var ids []string
	for _, prompt := range []string{"a paper boat on a rain puddle", "a red fox in fresh snow"} {
		g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: prompt})
		if err != nil {
			return err
		}
		ids = append(ids, g.ID)
	}
	results, err := poll.Generations(ctx, c, ids, poll.WithSaveFunc(save))
	if err != nil {
		return err
	}
	for _, r := range results {
		attrs, err := bucket.Attributes(ctx, r.ID+"/output")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "saved %s/output: %s, %d bytes\n", r.ID, attrs.ContentType, attrs.Size)
	}
	return nil
}
