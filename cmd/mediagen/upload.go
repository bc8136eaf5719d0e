package main

import (
	"strconv"

	"github.com/spf13/cobra"
)

// uploadCommand is `mediagen upload FILE...`.
func (a *app) uploadCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "upload FILE...",
		Short: "Upload reference files and print their ids",
		Long: `Uploads each file with the signed upload (streamed; at most 30 MB; images,
audio, video and documents) and prints its id, which generation arguments
take: --arg image=<id>. 'mediagen generate --file NAME=PATH' does both in one
step. A progress bar shows on a terminal. Files are kept 24 hours. With
--json it prints one file per line as it goes.`,
		Args: cobra.MinimumNArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, paths []string) error {
			for _, p := range paths {
				if err := checkFile(p); err != nil {
					return err
				}
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			var t *table // started with the first row: a failure before it prints none
			defer func() {
				if t != nil {
					t.flush() // on an error too: the ids of the files that went up
				}
			}()
			for _, p := range paths {
				f, err := a.uploadFile(cmd.Context(), c, p)
				if err != nil {
					return err
				}
				if a.json {
					if err := a.writeJSON(map[string]any{"path": p, "id": f.ID, "size": f.Size}); err != nil {
						return err
					}
					continue
				}
				if t == nil {
					t = newTable(a.stdout, "FILE", "ID", "BYTES")
				}
				t.row(p, f.ID, strconv.FormatInt(f.Size, 10))
			}
			return nil
		}),
	}
}
