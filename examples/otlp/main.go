// OTLP: export the OpenTelemetry spans of a submit-wait-save run to a
// collector over OTLP/HTTP: the job span of the generation, with the HTTP
// attempts, the wait (and its checks) and the save under it.
//
// The exporter reads the standard variables: OTEL_EXPORTER_OTLP_ENDPOINT
// (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; http://localhost:4318 for a local
// collector), OTEL_EXPORTER_OTLP_HEADERS (a vendor's key goes here, never
// on a span), OTEL_EXPORTER_OTLP_TIMEOUT and the others; OTEL_SERVICE_NAME
// names the service. This example is a module of its own, so the
// OpenTelemetry SDK and its exporter never reach the SDK's go.mod. Run it
// from this folder:
//
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 OTEL_SERVICE_NAME=renders go run .
//
// Without MEDIAGEN_API_KEY it runs against an in-process reference server;
// with it, against the service.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
)

func main() {
	if err := run(context.Background(), os.Stdout, "otlp-output"); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer, dir string) (err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()

	// With no option the exporter takes its endpoint, headers and timeout
	// from the OTEL_EXPORTER_OTLP_* variables; an http:// endpoint is sent
	// without TLS.
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	defer func() {
		// Shutdown sends the spans still batched; a collector that did
		// not take them fails the run.
		if serr := tp.Shutdown(context.Background()); err == nil && serr != nil {
			err = fmt.Errorf("exporting the spans: %w", serr)
		}
	}()
	otel.SetTracerProvider(tp) // the SDK uses the global providers by default

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

	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a lighthouse at dusk"})
	if err != nil {
		return err
	}
	g, err = poll.Generation(ctx, c, g.ID, poll.WithKind(g.Kind), poll.WithSaveTo(dir))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "generation %s: %s, saved under %s; its spans go to the OTLP endpoint as the run ends\n", g.ID, g.Status, dir)
	return nil
}
