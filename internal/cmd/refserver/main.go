// Command refserver runs the reference server of the media generation
// service standalone, for tests that do not run in Go or that want one
// server for many processes:
//
//	go run ./internal/cmd/refserver -addr 127.0.0.1:8080 -api-key KEY -balance 100 -render-scale 0.01
//
// It prints MEDIAGEN_BASE_URL, MEDIAGEN_API_KEY and MEDIAGEN_WEBHOOK_SECRET
// of the first project on stdout, one per line, then serves until SIGINT or
// SIGTERM. Webhook events are delivered, signed with the project's secret;
// deliveries that fail twice are reported on stderr. refserver -h prints
// every flag and exits 0; a command line that does not parse exits 2.
//
// Faults are off unless a -fault flag is given. Probabilities are in [0, 1];
// the three HTTP ones are exclusive per request and must not add up to more
// than 1, likewise the two render ones:
//
//	-fault-seed N            seed of the fault draws: the same seed and requests give the same faults
//	-fault-render-error P    probability a render or clone training ends in error (refunded)
//	-fault-render-timeout P  probability a render or clone training times out (refunded)
//	-fault-http P            probability an API answer is replaced by an error status, unprocessed
//	-fault-statuses LIST     the replacement statuses, e.g. 500,502,503,429 (default 500,502,503)
//	-fault-retry-after D     Retry-After of an injected 429, e.g. 2s
//	-fault-drop-before P     probability the connection drops before the request is processed
//	-fault-drop-after P      probability the connection drops after processing, before the answer
//	-fault-latency D         delay added to every API answer, e.g. 300ms
//
// HTTP faults apply to the API under /v3/, not to the storage host. For
// example, to test a client's retries:
//
//	go run ./internal/cmd/refserver -render-scale 0.01 -fault-seed 1 -fault-http 0.2 -fault-statuses 503,429 -fault-drop-after 0.1
//
// -test-control serves the test-control API under /test/v1/, described by
// openapi/testcontrol.json, and prints MEDIAGEN_TEST_CONTROL_URL as a fourth
// line. With it a test in any language can move the clock, read and set its
// project's balance, rotate its webhook secret, retire a catalog voice and
// switch faults while the server runs; each call carries a project's API key
// in the Authorization header, as on /v3. The server's clock is then real
// time plus an offset that only POST /test/v1/clock/advance grows. Without
// the flag those paths answer 404 like any unknown path:
//
//	go run ./internal/cmd/refserver -test-control -allow-http-webhooks -api-key KEY
//	curl -s -X POST -H 'Authorization: KEY' -d '{"duration":"24h1m"}' http://127.0.0.1:8080/test/v1/clock/advance
//
// -debug-addr ADDR serves net/http/pprof under /debug/pprof/ and the live
// heap after a collection under /debug/heap on a second listener, and
// prints its URL as MEDIAGEN_DEBUG_URL after the other lines;
// internal/cmd/refload reads it. -export starts each line with "export ",
// for pasting into a shell.
//
// The flags and the serving live in internal/refserver/serve, which
// cmd/mediagen's serve subcommand runs too.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mediagen/mediagen-go/internal/refserver/serve"
)

// command is this program as package serve runs it.
var command = serve.Command{Name: "refserver"}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(command.ExitCode(err, os.Stderr))
}

// run parses args, serves until ctx is done, then shuts down gracefully; see
// serve.Command.Run.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return command.Run(ctx, args, stdout, stderr)
}
