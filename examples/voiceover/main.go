// Voiceover: find a catalog voice by locale and tag, star it, borrow a
// template's delivery direction, price the script, generate the voiceover,
// wait for it and download the WAV.
//
// With MEDIAGEN_API_KEY set it talks to the service (and spends money). With
// no key it starts an in-process reference server, so it runs anywhere:
//
//	go run ./examples/voiceover
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/poll"
)

// The voice to use, by slug: a slug is stable across the catalog, so it can
// be kept in configuration where a uuid would be opaque.
const voiceSlug = "ava-warm-narrator"

const script = `Every lighthouse on this coast has a keeper's log. ` +
	`For two hundred years, each night was written down: the weather, the ships, ` +
	`the oil burned and the hours the lamp was lit. Tonight we open those logs ` +
	`and follow one family of keepers through storms, wrecks and rescues.`

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()

	var c *client.Client
	if os.Getenv("MEDIAGEN_API_KEY") == "" {
		// No key: serve the whole interface in-process; its clients wait on
		// the test server's clock.
		srv, err := clienttest.Start(clienttest.WithBalance(5))
		if err != nil {
			return err
		}
		defer srv.Close()
		c = srv.Client()
		fmt.Fprintln(out, "no MEDIAGEN_API_KEY: using an in-process reference server")
	} else {
		var err error
		if c, err = client.New(""); err != nil {
			return err
		}
	}

	// Locale and tags filter the catalog only; the project's clones, listed
	// first, pass unfiltered, so ask for the catalog explicitly.
	filter := client.VoiceFilter{Owner: mediagen.VoiceOwnerService, Locale: "en-US", Tags: []string{"narration"}}
	voices, err := c.Voices(ctx, filter)
	if err != nil {
		return err
	}
	for _, v := range voices {
		fmt.Fprintf(out, "voice: %s (%s) %v\n", v.Slug, v.Name, v.Tags)
	}
	i := slices.IndexFunc(voices, func(v *mediagen.Voice) bool { return v.Slug == voiceSlug })
	if i < 0 {
		return fmt.Errorf("voice %q is not among the en-US narration voices", voiceSlug)
	}
	// Starring is idempotent, so running the example twice is harmless.
	if err := c.FavoriteVoice(ctx, voices[i].ID); err != nil {
		return err
	}
	fmt.Fprintf(out, "starred %s\n", voiceSlug)
	args := client.VoiceoverArgs{VoiceID: voices[i].ID, Script: script}

	// A template's prompt directs the delivery; the voiceover works without one.
	templates, err := c.Templates(ctx, client.TemplateFilter{Feature: mediagen.FeatureAudioVoiceover, Category: "narration", Limit: 1})
	if err != nil {
		return err
	}
	if len(templates) > 0 && len(templates[0].Previews) > 0 {
		preview, err := c.TemplatePrompt(ctx, templates[0].Previews[0].ID)
		if err != nil {
			return err
		}
		args.Prompt = preview.Prompt
		fmt.Fprintf(out, "template: %s\n", preview.Title)
	}

	// Voiceovers are billed per started 1,000 characters of script.
	prices, err := c.Pricing(ctx)
	if err != nil {
		return err
	}
	estimate, err := prices.Estimate(args)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "script: %d characters\nestimate: %s\n", utf8.RuneCountInString(script), estimate)

	g, err := c.CreateGeneration(ctx, args)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "submitted %s, charged $%.4f\n", g.ID, g.BalanceUsed)

	// Audio is checked after 2 s, then up to every 5 s.
	g, err = poll.Generation(ctx, c, g.ID, poll.OnUpdate(func(g *mediagen.Generation) {
		fmt.Fprintf(out, "  status: %s\n", g.Status)
	}))
	if err != nil {
		return err
	}

	// The signed URL is its own credential: Download never sends the API
	// key. It expires with the generation (24 h), so download now; an
	// expired URL answers an error matching client.ErrExpired.
	var buf bytes.Buffer
	if err := c.Download(ctx, g.Output.URL(), &buf); err != nil {
		return err
	}
	wav := buf.Bytes()
	length, err := wavDuration(wav)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "downloaded %d bytes of %s, %.2f s\n", len(wav), g.Output.MIME, length.Seconds())
	return nil
}

// wavDuration reads a RIFF/WAVE header: the data size over the byte rate.
// It walks the chunks rather than assuming a 44-byte header, since encoders
// may add chunks (LIST, fact) before the data.
func wavDuration(b []byte) (time.Duration, error) {
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return 0, errors.New("not a WAV file")
	}
	var byteRate uint32
	for off := 12; off+8 <= len(b); {
		id, size := string(b[off:off+4]), binary.LittleEndian.Uint32(b[off+4:])
		switch {
		case id == "fmt " && size >= 16 && off+20 <= len(b):
			byteRate = binary.LittleEndian.Uint32(b[off+16:])
		case id == "data" && byteRate > 0:
			return time.Duration(uint64(size) * uint64(time.Second) / uint64(byteRate)), nil
		}
		off += 8 + int(size) + int(size%2) // chunks are padded to an even size
	}
	return 0, errors.New("WAV file without fmt and data chunks")
}
