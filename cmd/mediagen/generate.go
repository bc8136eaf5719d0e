package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/upload"
)

// waitFlags are the flags of commands that wait for generations.
type waitFlags struct {
	save    string        // --save DIR
	maxWait time.Duration // --max-wait
}

func (w *waitFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&w.save, "save", "", "save the outputs into `DIR` once done (outputs expire 24 hours after the request)")
	cmd.Flags().DurationVar(&w.maxWait, "max-wait", 0, "give up waiting after this long, such as 10m (the generation goes on; wait again later)")
}

// check refuses a negative --max-wait, which would wait without a limit.
func (w *waitFlags) check() error {
	if w.maxWait < 0 {
		return usageErrorf("--max-wait %v: want a positive duration", w.maxWait)
	}
	return nil
}

// options are the poll options of the flags.
func (w *waitFlags) options() []poll.Option {
	if w.maxWait > 0 {
		return []poll.Option{poll.WithMaxWait(w.maxWait)}
	}
	return nil
}

// generateCommand is `mediagen generate FEATURE ...`.
func (a *app) generateCommand() *cobra.Command {
	var (
		rawArgs, rawFiles []string
		wait              bool
		webhookURL        string
		wf                waitFlags
	)
	cmd := &cobra.Command{
		Use:   "generate FEATURE [--arg NAME=VALUE]... [--file NAME=PATH]... [--wait] [--save DIR]",
		Short: "Submit a generation, and optionally wait for it and save its outputs",
		Long: `Submits a generation of FEATURE (either spelling: video/logo-reveal or
logo-reveal) and prints it. Your balance is charged now, and refunded if the
generation ends in error or timeout.

--arg NAME=VALUE gives an argument; VALUE is sent as JSON when it parses as
JSON (8, 1.5, true, false), else as a string: --arg duration=8 is a number,
--arg prompt="a kite" a string (quote a number as JSON to send it as a
string: --arg 'title="2026"'). --file NAME=PATH uploads the file first and
passes its id as NAME. Everything is checked before anything is charged: an
unknown feature, a malformed --arg or a missing file fails at once, and the
service refuses bad values (exit code 2) without charging.

--wait waits until the generation is done (a live status line shows on a
terminal); --save DIR also saves its outputs there, and --max-wait gives up
waiting after a while (each implies --wait).

  mediagen generate image/generation --arg prompt="a lighthouse at dusk" --wait
  mediagen generate video/logo-reveal --file image=logo.png --arg prompt="sparks gather" \
      --arg duration=6 --save renders
  mediagen generate audio/voiceover --arg voiceId=ava-warm-narrator --arg script="Hello." --save .`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			if err := wf.check(); err != nil {
				return err
			}
			f, err := feature(args[0])
			if err != nil {
				return err
			}
			values, err := parseArgs(rawArgs)
			if err != nil {
				return err
			}
			files, err := parseFiles(rawFiles, values)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			for _, file := range files {
				up, err := a.uploadFile(ctx, c, file.path)
				if err != nil {
					return err
				}
				values[file.name] = up.ID
			}
			var opts []client.Option
			if webhookURL != "" {
				opts = append(opts, client.WithWebhookURL(webhookURL))
			}
			g, err := c.CreateGeneration(ctx, client.RawArgs{FeatureName: f, Values: values}, opts...)
			if err != nil {
				return err
			}
			if !wait && wf.save == "" && wf.maxWait == 0 {
				return a.printGeneration(g, nil)
			}
			return a.waitOne(ctx, c, g.ID, wf)
		}),
	}
	cmd.Flags().StringArrayVar(&rawArgs, "arg", nil, "an argument as NAME=VALUE (repeatable); VALUE is JSON when it parses as JSON (8, true), else a string")
	cmd.Flags().StringArrayVar(&rawFiles, "file", nil, "upload the file at PATH and pass its id as the argument NAME, as NAME=PATH (repeatable)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the generation is done (or failed)")
	cmd.Flags().StringVar(&webhookURL, "webhook-url", "", "ask for a signed webhook event at this https URL when it ends")
	wf.add(cmd)
	return cmd
}

// uploadFile uploads one file, with a progress bar on a terminal.
func (a *app) uploadFile(ctx context.Context, c *client.Client, path string) (*mediagen.File, error) {
	opts, done := a.uploadProgress(filepath.Base(path))
	f, err := upload.File(ctx, c, path, opts...)
	done()
	if err != nil {
		return nil, fmt.Errorf("upload %s: %w", path, err)
	}
	return f, nil
}

// waitOne waits for the generation id with a status line on a terminal,
// saves its outputs when asked, and prints it.
func (a *app) waitOne(ctx context.Context, c *client.Client, id string, wf waitFlags) error {
	line := a.newStatusLine(id + " waiting")
	g, err := poll.Generation(ctx, c, id, append(wf.options(), line.watch())...)
	line.stop()
	if errors.Is(err, context.Canceled) {
		return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted; %s goes on at the service: mediagen wait %s", id, id)}
	}
	if err != nil {
		if g != nil && g.Terminal() {
			// Failed: show what the service said, then the error.
			_ = a.printGeneration(g, nil)
		}
		return err
	}
	var saved *client.SavedOutput
	if wf.save != "" {
		if saved, err = c.SaveOutput(ctx, g, wf.save); err != nil {
			_ = a.printGeneration(g, nil)
			return fmt.Errorf("save %s: %w", g.ID, err)
		}
	}
	return a.printGeneration(g, saved)
}

// generationOut is a generation in --json output: the service's fields, and
// where its outputs were saved when they were.
type generationOut struct {
	*mediagen.Generation
	Saved *savedOut `json:"saved,omitempty"`
}

type savedOut struct {
	Path       string `json:"path"`
	PosterPath string `json:"posterPath,omitempty"`
}

// printGeneration prints one generation, and the paths of its saved
// outputs when saved is not nil.
func (a *app) printGeneration(g *mediagen.Generation, saved *client.SavedOutput) error {
	if a.json {
		out := generationOut{Generation: g}
		if saved != nil {
			out.Saved = &savedOut{Path: saved.Path, PosterPath: saved.PosterPath}
		}
		return a.writeJSON(out)
	}
	pairs := []string{
		"ID", g.ID,
		"FEATURE", string(g.Feature),
		"STATUS", string(g.Status),
		"COST", usd(g.BalanceUsed),
		"REQUESTED", when(g.RequestDate),
		"FINISHED", when(g.ResponseDate),
		"EXPIRES", when(g.ExpiresAt),
		"ERROR", g.Error,
		"OUTPUT", g.Output.URL(),
		"POSTER", g.Output.Poster,
		"TEXT", g.Output.Text,
	}
	if saved != nil {
		pairs = append(pairs, "SAVED", saved.Path, "SAVED POSTER", saved.PosterPath)
	}
	return a.fields(pairs...)
}
