package main

import (
	"bytes"
	"context"
	"io"
	"os"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// tracing is a run's --trace: its spans, kept until the command ends and
// then printed, so they never interleave with its output.
type tracing struct {
	tp   *sdktrace.TracerProvider
	span trace.Span   // the command's own span, the root of its trace
	buf  bytes.Buffer // one JSON object per span, as the stdout exporter writes them
	out  io.Writer    // stderr or --trace=FILE, masked by keyless
	file io.Closer    // --trace=FILE; nil for stderr
}

// startTrace starts tracing a subcommand's run when --trace was given: the
// SDK's spans go to the global tracer provider, under a span named after
// the command. Nothing (no argument, no flag) is recorded on that span: an
// argument may be a secret.
func (a *app) startTrace(cmd *cobra.Command) error {
	if a.trace == "" {
		return nil
	}
	t := &tracing{out: a.stderr}
	if a.trace != "-" {
		f, err := os.Create(a.trace)
		if err != nil {
			return usageErrorf("--trace: %v", err)
		}
		t.out, t.file = keyless{f, a.key}, f
	}
	exp, err := stdouttrace.New(stdouttrace.WithWriter(&t.buf))
	if err != nil {
		return err
	}
	t.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	otel.SetTracerProvider(t.tp)
	ctx, span := t.tp.Tracer("github.com/mediagen/mediagen-go/cmd/mediagen").Start(cmd.Context(), cmd.CommandPath())
	t.span = span
	cmd.SetContext(ctx)
	a.tracing = t
	return nil
}

// endTrace ends the command's span with err and prints the run's spans,
// one JSON object a line. A job span still open (a generation submitted
// without --wait) is not among them.
func (a *app) endTrace(err error) error {
	t := a.tracing
	if t == nil {
		return nil
	}
	if err != nil {
		t.span.SetStatus(codes.Error, "")
	}
	t.span.End()
	shutErr := t.tp.Shutdown(context.Background())
	for line := range bytes.Lines(t.buf.Bytes()) {
		if _, werr := t.out.Write(line); werr != nil && shutErr == nil {
			shutErr = werr
		}
	}
	if t.file != nil {
		if cerr := t.file.Close(); cerr != nil && shutErr == nil {
			shutErr = cerr
		}
	}
	return shutErr
}
