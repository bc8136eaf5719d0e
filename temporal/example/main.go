// Example: a Temporal workflow that renders images as activities of package
// mediagentemporal, each charged once whatever Temporal retries, and saves
// them.
//
// With no configuration it runs everything in-process: the reference
// server (clienttest) instead of the service, and Temporal's test
// environment instead of a Temporal server:
//
//	go run ./example
//
// With MEDIAGEN_API_KEY set it uses the service (and spends money); with
// TEMPORAL_ADDRESS set (for example localhost:7233, from `temporal server
// start-dev`) it runs a worker on that server and starts the workflow there.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"time"

	tclient "go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/client/journal"
	mt "github.com/mediagen/mediagen-go/temporal"
)

// RenderAll is the example workflow: it renders every request at once and
// returns their results. The activity's retries are safe: each attempt
// reuses its key, and a retried attempt resumes from its heartbeat.
func RenderAll(ctx workflow.Context, reqs []mt.Request) ([]mt.Result, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Minute,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 5 * time.Second, MaximumAttempts: 10},
	})
	var acts *mt.Activities // names the activity; the worker's instance runs it
	futures := make([]workflow.Future, len(reqs))
	for i, r := range reqs {
		futures[i] = workflow.ExecuteActivity(ctx, acts.Generate, r)
	}
	results := make([]mt.Result, len(reqs))
	for i, f := range futures {
		if err := f.Get(ctx, &results[i]); err != nil {
			return nil, err
		}
	}
	return results, nil
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	var c *client.Client
	var err error
	if os.Getenv(client.EnvAPIKey) == "" {
		srv, err := clienttest.Start()
		if err != nil {
			return err
		}
		defer srv.Close()
		fmt.Fprintln(out, "no MEDIAGEN_API_KEY: using an in-process reference server")
		c = srv.MustClient(client.WithJournal(journal.NewMemory()))
	} else if c, err = client.New("", client.WithJournal(journal.NewMemory())); err != nil {
		return err // share a journal.SQL between workers on several machines
	}
	acts, err := mt.New(c)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "temporal-example-")
	if err != nil {
		return err
	}
	var reqs []mt.Request
	for _, p := range []string{"a lighthouse at dusk", "a paper boat on a puddle"} {
		reqs = append(reqs, mt.Request{Feature: "image/generation", Args: map[string]any{"prompt": p}, SaveTo: dir})
	}

	var results []mt.Result
	if addr := os.Getenv("TEMPORAL_ADDRESS"); addr != "" {
		results, err = onServer(ctx, addr, acts, reqs)
	} else {
		fmt.Fprintln(out, "no TEMPORAL_ADDRESS: using Temporal's test environment")
		results, err = inProcess(acts, reqs)
	}
	if err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintf(out, "%s %s (key %s) saved to %s\n", r.Generation.ID, r.Generation.Status, r.Key, r.Saved.Path)
	}
	return nil
}

// inProcess runs the workflow in Temporal's test environment.
func inProcess(acts *mt.Activities, reqs []mt.Request) ([]mt.Result, error) {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(RenderAll)
	env.RegisterActivity(acts)
	env.ExecuteWorkflow(RenderAll, reqs)
	if err := env.GetWorkflowError(); err != nil {
		return nil, err
	}
	var results []mt.Result
	return results, env.GetWorkflowResult(&results)
}

// onServer runs a worker on a Temporal server and the workflow there.
func onServer(ctx context.Context, addr string, acts *mt.Activities, reqs []mt.Request) ([]mt.Result, error) {
	tc, err := tclient.Dial(tclient.Options{HostPort: addr})
	if err != nil {
		return nil, err
	}
	defer tc.Close()
	const queue = "mediagen-example"
	w := worker.New(tc, queue, worker.Options{})
	w.RegisterWorkflow(RenderAll)
	w.RegisterActivity(acts)
	if err := w.Start(); err != nil {
		return nil, err
	}
	defer w.Stop()
	run, err := tc.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{ID: "render-" + time.Now().Format("20060102-150405"), TaskQueue: queue}, RenderAll, reqs)
	if err != nil {
		return nil, err
	}
	var results []mt.Result
	return results, run.Get(ctx, &results)
}
