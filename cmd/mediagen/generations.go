package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/poll"
)

// getCommand is `mediagen get ID`.
func (a *app) getCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "get ID",
		Short: "Show a generation",
		Args:  cobra.ExactArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			g, err := c.GetGeneration(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.printGeneration(g, nil)
		}),
	}
}

// listCommand is `mediagen list`.
func (a *app) listCommand() *cobra.Command {
	var (
		p   client.ListParams
		all bool
	)
	cmd := &cobra.Command{
		Use:   "list [--feature F] [--limit N] [--all]",
		Short: "List your generations, newest first",
		Long: `Lists your generations, newest first: one page (--limit, 24 by default), or
every page with --all. Generations made through the API drop out 24 hours
after their request. With --json it prints one generation per line.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			if p.Feature != "" {
				if _, err := feature(string(p.Feature)); err != nil {
					return err
				}
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			var t *table
			if !a.json {
				t = newTable(a.stdout, "ID", "FEATURE", "STATUS", "COST", "REQUESTED")
			}
			show := func(g *mediagen.Generation) error {
				if a.json {
					return a.writeJSON(g)
				}
				t.row(g.ID, string(g.Feature), string(g.Status), usd(g.BalanceUsed), when(g.RequestDate))
				return nil
			}
			var next string
			if all {
				for g, err := range c.Generations(cmd.Context(), p) {
					if err != nil {
						return err
					}
					if err := show(g); err != nil {
						return err
					}
				}
			} else {
				page, err := c.ListGenerations(cmd.Context(), p)
				if err != nil {
					return err
				}
				for _, g := range page.Generations {
					if err := show(g); err != nil {
						return err
					}
				}
				next = page.NextCursor
			}
			if t != nil {
				if err := t.flush(); err != nil {
					return err
				}
			}
			if next != "" {
				a.note("more: mediagen list --cursor %s, or --all", printable(next))
			}
			return nil
		}),
	}
	cmd.Flags().Var((*featureValue)(&p.Feature), "feature", "only generations of this feature (either spelling)")
	cmd.Flags().IntVar(&p.Limit, "limit", 0, "generations on the page, 1 to 100 (default 24)")
	cmd.Flags().StringVar(&p.Cursor, "cursor", "", "continue after an earlier page (its cursor)")
	cmd.Flags().BoolVar(&all, "all", false, "list every page")
	return cmd
}

// featureValue is a --feature flag.
type featureValue mediagen.Feature

func (f *featureValue) String() string     { return string(*f) }
func (f *featureValue) Set(s string) error { *f = featureValue(s); return nil }
func (f *featureValue) Type() string       { return "feature" }

// waitCommand is `mediagen wait ID...`.
func (a *app) waitCommand() *cobra.Command {
	var wf waitFlags
	cmd := &cobra.Command{
		Use:   "wait ID... [--save DIR]",
		Short: "Wait until generations are done, and optionally save their outputs",
		Long: `Waits until each generation is done, failed or timed out, checking on the
schedule the service advises for its kind, then prints them. On a terminal
a status line shows progress. --save DIR saves the outputs of those done.
Exit code 1 when one failed (its charge was refunded), 5 when one is gone.`,
		Args: cobra.MinimumNArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, ids []string) error {
			if err := wf.check(); err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			if len(ids) == 1 {
				return a.waitOne(cmd.Context(), c, ids[0], wf)
			}
			line := a.newStatusLine(fmt.Sprintf("waiting for %d generations", len(ids)))
			status := map[string]mediagen.GenerationStatus{}
			opts := append(wf.options(), poll.OnUpdate(func(g *mediagen.Generation) {
				status[g.ID] = g.Status
				line.set(countStatuses(len(ids), status))
			}))
			results, err := poll.Generations(cmd.Context(), c, ids, opts...)
			line.stop()
			var t *table
			if !a.json {
				t = newTable(a.stdout, "ID", "FEATURE", "STATUS", "SAVED", "ERROR")
			}
			var errs []error
			for _, r := range results {
				var saved *client.SavedOutput
				rerr := r.Err
				if rerr == nil && wf.save != "" {
					if saved, rerr = c.SaveOutput(cmd.Context(), r.Generation, wf.save); rerr != nil {
						rerr = fmt.Errorf("save %s: %w", r.ID, rerr)
					}
				}
				if rerr != nil {
					errs = append(errs, rerr)
				}
				if err := a.printResult(t, r, saved, rerr); err != nil {
					return err
				}
			}
			if t != nil {
				if err := t.flush(); err != nil {
					return err
				}
			}
			if cerr := cmd.Context().Err(); cerr != nil {
				return cerr // interrupted: 130, whatever ended before
			}
			if len(errs) > 0 {
				return errs[0] // each is on its row; the first decides the exit code
			}
			return err
		}),
	}
	wf.add(cmd)
	return cmd
}

// printResult prints one result of a wait on many generations: a row of t,
// or a line of JSON.
func (a *app) printResult(t *table, r poll.Result, saved *client.SavedOutput, err error) error {
	if a.json {
		out := struct {
			ID         string         `json:"id"`
			Generation *generationOut `json:"generation,omitempty"`
			Error      string         `json:"error,omitempty"`
		}{ID: r.ID}
		if r.Generation != nil {
			out.Generation = &generationOut{Generation: r.Generation}
			if saved != nil {
				out.Generation.Saved = &savedOut{Path: saved.Path, PosterPath: saved.PosterPath}
			}
		}
		if err != nil {
			out.Error = err.Error()
		}
		return a.writeJSON(out)
	}
	var feature, status, path, msg string
	if r.Generation != nil {
		feature, status = string(r.Generation.Feature), string(r.Generation.Status)
	}
	if saved != nil {
		path = saved.Path
	}
	if err != nil {
		msg = oneLine(err.Error())
	}
	t.row(r.ID, feature, status, path, msg)
	return nil
}

// countStatuses summarises a wait on n generations, as "2 of 3 done, 1 running".
func countStatuses(n int, status map[string]mediagen.GenerationStatus) string {
	counts := map[mediagen.GenerationStatus]int{}
	for _, s := range status {
		counts[s]++
	}
	parts := []string{fmt.Sprintf("%d of %d done", counts[mediagen.GenerationStatusDone], n)}
	for _, s := range []mediagen.GenerationStatus{mediagen.GenerationStatusPending, mediagen.GenerationStatusRunning,
		mediagen.GenerationStatusError, mediagen.GenerationStatusTimeout} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	return strings.Join(parts, ", ")
}

// downloadCommand is `mediagen download ID [--dir DIR]`.
func (a *app) downloadCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "download ID [--dir DIR]",
		Short: "Save the outputs of a done generation",
		Long: `Saves the output of a done generation into DIR (the current folder by
default) as <id><ext>, and a video's poster as <id>.poster<ext>, then
prints the paths. An id with characters other than lower-case letters,
digits, - and _ is cleaned and followed by a short hash of itself, so that
distinct ids never share a file. Outputs expire with the generation, 24
hours after the request.`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			g, err := c.GetGeneration(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if g.Status != mediagen.GenerationStatusDone {
				hint := "wait for it first: mediagen wait " + g.ID
				if g.Status.Failed() {
					hint = "it has no output"
				}
				return &exitError{code: exitOther, err: fmt.Errorf("generation %s is %s; %s", g.ID, g.Status, hint)}
			}
			saved, err := c.SaveOutput(cmd.Context(), g, dir)
			if err != nil {
				return fmt.Errorf("save %s: %w", g.ID, err)
			}
			if a.json {
				return a.writeJSON(savedOut{Path: saved.Path, PosterPath: saved.PosterPath})
			}
			a.printf("%s\n", saved.Path)
			if saved.PosterPath != "" {
				a.printf("%s\n", saved.PosterPath)
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "the folder to save into (created when missing)")
	return cmd
}

// deleteCommand is `mediagen delete ID...`.
func (a *app) deleteCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID...",
		Short: "Delete generations and their outputs (no refund)",
		Args:  cobra.MinimumNArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, ids []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			var errs []error
			for _, id := range ids {
				err := c.DeleteGeneration(cmd.Context(), id)
				switch {
				case err != nil:
					errs = append(errs, fmt.Errorf("delete %s: %w", id, err))
				case a.json:
					if err := a.writeJSON(map[string]any{"id": id, "deleted": true}); err != nil {
						return err
					}
				default:
					a.printf("deleted %s\n", id)
				}
			}
			return errors.Join(errs...)
		}),
	}
}
