package main

import (
	"context"
	"errors"
	"flag"

	"github.com/spf13/cobra"

	"github.com/mediagen/mediagen-go/internal/refserver/serve"
)

// serveAbout is the text of `mediagen serve --help` between its usage line
// and its flags.
const serveAbout = `Runs the reference server: the whole service in memory, with balances,
charges and refunds, real media outputs and signed webhooks, so that every
other mediagen command, and your programs and tests in any language, can run
without the network and without spending money.

Before serving it prints KEY=VALUE lines on stdout, the same as the
refserver command, for scripts to read: MEDIAGEN_BASE_URL, MEDIAGEN_API_KEY,
MEDIAGEN_WEBHOOK_SECRET, then MEDIAGEN_TEST_CONTROL_URL with --test-control
and MEDIAGEN_UI_URL with --ui.
It serves until SIGINT (Ctrl-C) or SIGTERM.

To use it from another shell, start it with --export, which prints
"export KEY=VALUE" lines, and paste them there:

  mediagen serve --render-scale 0.01 --export         # shell 1
  export MEDIAGEN_BASE_URL=http://127.0.0.1:8080 ...  # shell 2: the pasted lines
  mediagen generate image/generation --arg prompt="a kite" --wait

or let a script read them from a file:

  mediagen serve --addr 127.0.0.1:0 --export > mediagen.env &
  sleep 1; . ./mediagen.env

--test-control adds the test-control API under /test/v1/ (move the clock, set
the balance, rotate the webhook secret, retire a voice, inject faults), for
tests in any language; the SDK's README describes it.

--ui serves a page at MEDIAGEN_UI_URL that shows, for the API key you give
it, the project's generations with their outputs, its balance and its
webhook deliveries, and with --test-control buttons for the clock, the
balance and faults.

Every flag takes one dash or two (-addr or --addr).
`

// serveCommand is `mediagen serve`: the reference server command of the
// SDK, run with its own flags (package flag parses them, so -h and --help
// print them).
func (a *app) serveCommand() *cobra.Command {
	command := serve.Command{Name: "mediagen serve", About: serveAbout}
	return &cobra.Command{
		Use:                "serve [flags]",
		Short:              "Run the reference server locally (mediagen serve --help lists its flags)",
		Long:               serveAbout + "\nRun 'mediagen serve --help' for the flags.",
		DisableFlagParsing: true,
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			// Unmasked: its KEY=VALUE lines print the server's own keys,
			// which may be MEDIAGEN_API_KEY's when a script starts it again.
			err := command.Run(cmd.Context(), args, underlying(a.stdout), a.stderr)
			var usage *serve.UsageError
			if err == nil || errors.Is(err, flag.ErrHelp) || errors.As(err, &usage) || errors.Is(err, context.Canceled) {
				return err
			}
			return &exitError{code: exitOther, err: err} // as its help says: not 6 for an address in use
		}),
	}
}
