// Tracing: print the spans of one submit-wait-save run with the
// OpenTelemetry stdout exporter: the job span of the generation, with the
// HTTP attempts, the wait (and its checks) and the save under it.
//
// This example is a module of its own, so the OpenTelemetry SDK and its
// exporter never reach the SDK's go.mod (which needs only the
// OpenTelemetry API). Run it from this folder:
//
//	go run .             # an in-process reference server; outputs under ./tracing-output
//
// With MEDIAGEN_API_KEY set it talks to the service instead.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
)

func main() {
	if err := run(context.Background(), os.Stdout, "tracing-output"); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()

	// The SDK uses the global providers unless client.WithTracerProvider
	// names another, as otelhttp does.
	exp, err := stdouttrace.New(stdouttrace.WithWriter(out), stdouttrace.WithPrettyPrint())
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	otel.SetTracerProvider(tp)

	var c *client.Client
	if os.Getenv("MEDIAGEN_API_KEY") == "" {
		srv, err := clienttest.Start()
		if err != nil {
			return err
		}
		defer srv.Close()
		c = srv.Client()
	} else if c, err = client.New(""); err != nil {
		return err
	}

	// Submit starts the job span; the wait and the save join it, and the
	// job span ends (and is printed) once the output is saved.
	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a lighthouse at dusk"})
	if err != nil {
		return err
	}
	g, err = poll.Generation(ctx, c, g.ID, poll.WithKind(g.Kind), poll.WithSaveTo(dir))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "generation %s: %s, saved under %s\n", g.ID, g.Status, dir)
	return nil
}
