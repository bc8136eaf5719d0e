package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mediagen/mediagen-go/client"
)

// app is one run of the command: where it reads and writes, and the global
// flags.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	apiKey         string   // --api-key; MEDIAGEN_API_KEY when empty
	baseURL        string   // --base-url; MEDIAGEN_BASE_URL when empty
	json           bool     // --json
	trace          string   // --trace: "-" for stderr, else a file
	tracing        *tracing // the spans of --trace; nil without it
	ran            bool     // a subcommand's RunE began: earlier errors are usage errors
}

// execute runs the command line args and returns the exit status, having
// printed any error on stderr as one line.
func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin}
	stdout, stderr = keyless{stdout, a.key}, keyless{stderr, a.key}
	a.stdout, a.stderr = stdout, stderr
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && !a.ran {
		err = usageErrorf("%v (see %s --help)", err, cmd.CommandPath())
	}
	if terr := a.endTrace(err); err == nil {
		err = terr
	}
	return report(err, stderr)
}

// rootCommand is `mediagen` with its global flags and every subcommand.
func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "mediagen",
		Short: "The media generation service from the terminal",
		Long: `mediagen submits and follows generations, uploads files, lists voices and
templates, prices calls, sends and checks test webhook deliveries, and
forwards the project's webhook events to a receiver on this machine.
'mediagen serve' runs the reference server, to try it all offline.

The API key comes from MEDIAGEN_API_KEY (or --api-key), the base URL from
MEDIAGEN_BASE_URL (or --base-url). Results go to stdout as tables, or as
JSON with --json (one document, or one object per line for commands that go
through many items); errors go to stderr.

Exit codes: 0 success; 1 other failure (a generation that failed, a delivery
refused or not valid); 2 usage (bad command line, unknown feature, bad
--arg, missing file, an argument the service refused; nothing charged);
3 authentication (no key, or 401); 4 balance too low (402; nothing
charged); 5 not found (404); 6 service or network (5xx, unreachable);
130 interrupted.`,
		Version:       version(),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	flags := root.PersistentFlags()
	flags.StringVar(&a.apiKey, "api-key", "", "API key (default: $MEDIAGEN_API_KEY, which is safer: a flag shows in the process list)")
	flags.StringVar(&a.baseURL, "base-url", "", "service address (default: $MEDIAGEN_BASE_URL)")
	flags.BoolVar(&a.json, "json", false, "print JSON for scripts instead of tables")
	flags.StringVar(&a.trace, "trace", "", "print the run's OpenTelemetry spans when it ends, one JSON object a line, on stderr (--trace) or into a file (--trace=FILE)")
	flags.Lookup("trace").NoOptDefVal = "-"

	root.AddCommand(
		a.serveCommand(),
		a.priceCommand(),
		a.estimateCommand(),
		a.generateCommand(),
		a.batchCommand(),
		a.workerCommand(),
		a.getCommand(),
		a.listCommand(),
		a.waitCommand(),
		a.downloadCommand(),
		a.deleteCommand(),
		a.uploadCommand(),
		a.voicesCommand(),
		a.templatesCommand(),
		a.triggerCommand(),
		a.verifyCommand(),
		a.listenCommand(),
	)
	return root
}

// runE wraps a subcommand's work: errors it returns are the work's, not the
// command line's, and are classified by report.
func (a *app) runE(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		a.ran = true
		if err := a.startTrace(cmd); err != nil {
			return err
		}
		return fn(cmd, args)
	}
}

// client returns a client for the API key and base URL of the flags or the
// environment, with extra options. Nothing is sent yet.
func (a *app) client(extra ...client.Option) (*client.Client, error) {
	key := a.key()
	if key == "" {
		return nil, &exitError{code: exitAuth, err: errors.New("no API key: set MEDIAGEN_API_KEY or pass --api-key")}
	}
	opts := []client.Option{client.WithUserAgent("mediagen-cli/" + version() + " mediagen-go/" + client.Version)}
	if a.baseURL != "" {
		opts = append(opts, client.WithBaseURL(a.baseURL))
	}
	c, err := client.New(key, append(opts, extra...)...)
	switch {
	case errors.Is(err, client.ErrNoBaseURL):
		return nil, usageErrorf("no base URL: set MEDIAGEN_BASE_URL or pass --base-url")
	case err != nil:
		return nil, usageErrorf("%v", err)
	}
	return c, nil
}

// version is the command's module version when it was installed at one,
// else "devel".
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}

// printf writes to stdout; a failed write to stdout (a closed pipe) has no
// better place to be reported.
func (a *app) printf(format string, args ...any) {
	fmt.Fprintf(a.stdout, format, args...)
}

// note writes a line for people on stderr when it is a terminal: hints
// that scripts reading stdout must not see.
func (a *app) note(format string, args ...any) {
	if isTerminal(a.stderr) {
		fmt.Fprintf(a.stderr, strings.TrimSuffix(format, "\n")+"\n", args...)
	}
}
