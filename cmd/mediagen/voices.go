package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/poll"
)

// voicesCommand is `mediagen voices` and its subcommands.
func (a *app) voicesCommand() *cobra.Command {
	var (
		f     client.VoiceFilter
		owner string
	)
	cmd := &cobra.Command{
		Use:   "voices [--tag T]... [--locale L] [--favorites] [--owner service|project]",
		Short: "List voices: your clones, then the catalog",
		Long: `Lists the voices audio/voiceover and video/avatar speak in: your project's
clones first, then the catalog. Give a voice's id, or a catalog voice's slug,
as --arg voiceId=... to those features. --tag and --locale filter catalog
voices only (a voice must carry every --tag; --locale is an exact match such
as en-US).`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			switch owner {
			case "", string(mediagen.VoiceOwnerService), string(mediagen.VoiceOwnerProject):
				f.Owner = mediagen.VoiceOwner(owner)
			default:
				return usageErrorf("--owner %q: want service or project", owner)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			voices, err := c.Voices(cmd.Context(), f)
			if err != nil {
				return err
			}
			if a.json {
				if voices == nil {
					voices = []*mediagen.Voice{}
				}
				return a.writeJSON(voices)
			}
			t := newTable(a.stdout, "ID", "SLUG", "NAME", "OWNER", "LOCALE", "TAGS", "FAVORITE", "STATUS")
			for _, v := range voices {
				fav := ""
				if v.Favorite {
					fav = "yes"
				}
				t.row(v.ID, v.Slug, v.Name, string(v.Owner), v.Locale, strings.Join(v.Tags, ","), fav, string(v.Status))
			}
			return t.flush()
		}),
	}
	cmd.Flags().StringArrayVar(&f.Tags, "tag", nil, "only catalog voices with this tag (repeatable: all must match)")
	cmd.Flags().StringVar(&f.Locale, "locale", "", "only catalog voices of this locale, such as en-US")
	cmd.Flags().BoolVar(&f.Favorites, "favorites", false, "only voices your project starred")
	cmd.Flags().StringVar(&owner, "owner", "", "only service (catalog) or project (your clones) voices")
	cmd.AddCommand(a.cloneCommand(), a.voiceDeleteCommand(), a.favoriteCommand(true), a.favoriteCommand(false))
	return cmd
}

// cloneCommand is `mediagen voices clone NAME --audio FILE`.
func (a *app) cloneCommand() *cobra.Command {
	var (
		audio, description string
		wait               bool
	)
	cmd := &cobra.Command{
		Use:   "clone NAME --audio FILE [--description D] [--wait]",
		Short: "Clone a voice from an audio sample (charged)",
		Long: `Uploads the sample (about 30 seconds of clean speech, at least 10; MP3, WAV,
M4A, OGG, FLAC or WebM) and starts training a clone named NAME. Your balance
is charged now and refunded if training fails. --wait waits until it is
trained, with a status line on a terminal.`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			if audio == "" {
				return usageErrorf("--audio FILE is required: the sample to clone")
			}
			if err := checkFile(audio); err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			sample, err := a.uploadFile(cmd.Context(), c, audio)
			if err != nil {
				return err
			}
			v, err := c.CloneVoice(cmd.Context(), client.CloneVoiceParams{Name: args[0], Audio: sample.ID, Description: description})
			if err != nil {
				return err
			}
			if wait {
				line := a.newStatusLine(fmt.Sprintf("%s %s %s", v.ID, v.Name, v.Status))
				v, err = poll.Voice(cmd.Context(), c, v.ID, poll.OnVoiceUpdate(func(v *mediagen.Voice) {
					line.set(fmt.Sprintf("%s %s %s", v.ID, v.Name, v.Status))
				}))
				line.stop()
				if v != nil && v.Terminal() {
					if perr := a.printVoice(v); perr != nil && err == nil {
						err = perr
					}
					return err
				}
				if err != nil {
					return err
				}
			}
			return a.printVoice(v)
		}),
	}
	cmd.Flags().StringVar(&audio, "audio", "", "the audio sample to clone")
	cmd.Flags().StringVar(&description, "description", "", "a description of the voice")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until training ends")
	return cmd
}

// printVoice prints one voice.
func (a *app) printVoice(v *mediagen.Voice) error {
	if a.json {
		return a.writeJSON(v)
	}
	return a.fields(
		"ID", v.ID,
		"SLUG", v.Slug,
		"NAME", v.Name,
		"OWNER", string(v.Owner),
		"STATUS", string(v.Status),
		"DESCRIPTION", v.Description,
		"ERROR", v.Error,
	)
}

// voiceDeleteCommand is `mediagen voices delete ID`.
func (a *app) voiceDeleteCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "Delete one of your clones (catalog voices cannot be deleted)",
		Args:  cobra.ExactArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := c.DeleteVoice(cmd.Context(), args[0]); err != nil {
				return err
			}
			if a.json {
				return a.writeJSON(map[string]any{"id": args[0], "deleted": true})
			}
			a.printf("deleted %s\n", args[0])
			return nil
		}),
	}
}

// favoriteCommand is `mediagen voices favorite ID` (on) or
// `mediagen voices unfavorite ID`.
func (a *app) favoriteCommand(on bool) *cobra.Command {
	use, short, call := "favorite ID", "Star a voice (by id or slug) for your project", (*client.Client).FavoriteVoice
	if !on {
		use, short, call = "unfavorite ID", "Remove your project's star from a voice", (*client.Client).UnfavoriteVoice
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := call(c, cmd.Context(), args[0]); err != nil {
				return err
			}
			if a.json {
				return a.writeJSON(map[string]any{"id": args[0], "favorite": on})
			}
			if on {
				a.printf("starred %s\n", args[0])
			} else {
				a.printf("unstarred %s\n", args[0])
			}
			return nil
		}),
	}
}
