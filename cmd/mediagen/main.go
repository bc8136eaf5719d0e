// Command mediagen is the media generation service from the terminal: prices
// and estimates, generations (submit, wait, save, list, delete), uploads,
// voices, templates, test webhook deliveries and their verification, the
// project's real events forwarded to a receiver on this machine
// (`mediagen listen`), and `mediagen serve`, the reference server, for
// trying all of it offline.
//
//	mediagen serve --render-scale 0.01 --export    # in one shell: paste the lines it prints into another
//	mediagen price video/logo-reveal
//	mediagen estimate video/logo-reveal --arg duration=8 --arg resolution=1080p
//	mediagen generate video/logo-reveal --file image=logo.png --arg prompt="sparks gather" --wait --save renders
//	mediagen list --json | jq -r .id
//	mediagen listen --forward-to http://localhost:8000/hooks
//
// The API key comes from MEDIAGEN_API_KEY or --api-key (the environment is
// better: a flag shows in the process list); it is never printed, not in an
// error and not in --help. The base URL comes from MEDIAGEN_BASE_URL or
// --base-url.
//
// # Output
//
// Results go to stdout, as tables for people or, with --json, as JSON for
// scripts: a command that prints one thing (a generation, a price list, the
// voices) prints one JSON document; a command that goes through many (list,
// upload, wait and delete with several ids) prints one JSON object per line
// as it goes. Errors go to stderr, one line each. Progress bars and status
// lines go to stderr, and only when stderr is a terminal. --trace prints
// the run's OpenTelemetry spans, one JSON object a line, on stderr (or into
// --trace=FILE) once the command ends.
//
// # Exit codes
//
//	0    success
//	1    any other failure: a generation that ended in error or timeout, a
//	     webhook receiver that refused a delivery, a delivery that does not verify
//	2    usage: an unknown command, flag or feature, a malformed --arg, a file
//	     that is missing or cannot be uploaded, an argument the service refused
//	     (400, or 403 for a likeness without permissionConfirmed); nothing was charged
//	3    authentication: no API key, or the service refused it (401)
//	4    balance: the call costs more than the balance (402); nothing was charged
//	5    not found: the generation, voice or preview does not exist or expired (404)
//	6    service or network: a 5xx, a 429 the retries did not outlast, a service
//	     or receiver that cannot be reached
//	130  interrupted (Ctrl-C)
//
// # Install
//
//	go install github.com/mediagen/mediagen-go/cmd/mediagen@latest
//
// The command is a module of its own, github.com/mediagen/mediagen-go/cmd/mediagen,
// so that its libraries (cobra, progressbar) never reach the go.mod of
// programs that use the SDK. Inside the repository its go.mod points at the
// SDK in the same tree with a replace directive (replace
// github.com/mediagen/mediagen-go => ../..). `go install module@version`
// refuses a module whose go.mod has a replace directive, so a release of the
// command drops it: tag the SDK (vX.Y.Z); release the River module
// (river/go.mod, whose jobs `mediagen worker` runs) the same way, dropping
// its replace and requiring the SDK at vX.Y.Z, tag river/vR.S.T; then in
// cmd/mediagen run `go mod edit -dropreplace=github.com/mediagen/mediagen-go
// -dropreplace=github.com/mediagen/mediagen-go/river
// -require=github.com/mediagen/mediagen-go@vX.Y.Z
// -require=github.com/mediagen/mediagen-go/river@vR.S.T`
// and `go mod tidy`, commit, and tag cmd/mediagen/vA.B.C (a nested module's
// tags carry its folder); the next commit may put the replace back for
// development, as the tag keeps the released go.mod. Until such a release
// exists, install from a clone: `cd cmd/mediagen && go install .`.
// install_test.go proves that the released form installs with
// `go install ...@latest`, through a module proxy on disk, and that the
// committed form is refused.
//
// `mediagen serve` runs the SDK's reference server from
// github.com/mediagen/mediagen-go/internal/refserver/serve: Go's internal rule
// goes by import path, and this module's path lies inside the SDK's.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
