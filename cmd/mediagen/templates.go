package main

import (
	"github.com/spf13/cobra"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

// templatesCommand is `mediagen templates` and `mediagen templates prompt`.
func (a *app) templatesCommand() *cobra.Command {
	var f client.TemplateFilter
	cmd := &cobra.Command{
		Use:   "templates [--feature F] [--category C] [--title T]... [--per-category N] [--limit N]",
		Short: "List templates: ready-made styles of a feature",
		Long: `Lists the templates of a feature (image/self-portrait unless --feature says
otherwise), one row per preview. 'mediagen templates prompt PREVIEW' prints
a preview's prompt, the exact string to send as the prompt argument:

  mediagen generate image/self-portrait --file image=me.jpg \
      --arg prompt="$(mediagen templates prompt PREVIEW)" --arg permissionConfirmed=true`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			if f.Feature != "" {
				if _, err := feature(string(f.Feature)); err != nil {
					return err
				}
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			templates, err := c.Templates(cmd.Context(), f)
			if err != nil {
				return err
			}
			if a.json {
				if templates == nil {
					templates = []*mediagen.Template{}
				}
				return a.writeJSON(templates)
			}
			t := newTable(a.stdout, "TEMPLATE", "TITLE", "CATEGORY", "FEATURE", "PREVIEW", "GENDER")
			for _, tpl := range templates {
				if len(tpl.Previews) == 0 {
					t.row(tpl.ID, tpl.Title, tpl.Category, string(tpl.Feature), "", "")
				}
				for _, p := range tpl.Previews {
					t.row(tpl.ID, tpl.Title, tpl.Category, string(tpl.Feature), p.ID, p.Gender)
				}
			}
			return t.flush()
		}),
	}
	cmd.Flags().Var((*featureValue)(&f.Feature), "feature", "the feature (either spelling; default image/self-portrait)")
	cmd.Flags().StringVar(&f.Category, "category", "", "only this category, such as motion")
	cmd.Flags().StringArrayVar(&f.Titles, "title", nil, "only this title, exact match (repeatable)")
	cmd.Flags().IntVar(&f.PerCategory, "per-category", 0, "at most this many of each category, 1 to 50")
	cmd.Flags().IntVar(&f.Limit, "limit", 0, "at most this many in all, 1 to 500")
	cmd.AddCommand(a.promptCommand())
	return cmd
}

// promptCommand is `mediagen templates prompt PREVIEW`.
func (a *app) promptCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "prompt PREVIEW",
		Short: "Print the prompt of a template preview",
		Long: `Prints the prompt of a template preview (an id from the PREVIEW column of
'mediagen templates'), alone on its line, for $(...) in a shell; with --json
the whole preview. On a terminal its control characters show escaped (ESC
as \x1b); elsewhere it is the exact string.`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			p, err := c.TemplatePrompt(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if a.json {
				return a.writeJSON(p)
			}
			prompt := p.Prompt
			if isTerminal(a.stdout) {
				prompt = printableText(prompt) // for reading; $(...) gets the exact string
			}
			a.printf("%s\n", prompt)
			return nil
		}),
	}
}
