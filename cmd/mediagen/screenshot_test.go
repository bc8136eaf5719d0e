package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
)

// TestScreenshots regenerates the page's screenshots in the README, at
// desktop and phone width, when MEDIAGEN_SCREENSHOTS names the folder to
// write them to:
//
//	MEDIAGEN_SCREENSHOTS=../../docs go test -run TestScreenshots .
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("MEDIAGEN_SCREENSHOTS")
	if dir == "" {
		t.Skip("set MEDIAGEN_SCREENSHOTS to a folder to write the page's screenshots there")
	}
	s := startUIServer(t)
	ctx := newBrowser(t)
	// The receiver refuses the first delivery, so one shows its retry.
	hook := httptest.NewServer(&uiReceiver{})
	t.Cleanup(hook.Close)
	bg := context.Background()
	c := s.client(t, client.WithWebhookURL(hook.URL+"/hook"))
	_, err := c.CreateGeneration(bg, client.ImageGenerationArgs{Prompt: "a red kite over a grey sea", AspectRatio: "16:9"})
	require.NoError(t, err)
	_, err = s.client(t).CreateGeneration(bg, client.VoiceoverArgs{VoiceID: "ava-warm-narrator", Script: "Welcome to the reference server."})
	require.NoError(t, err)
	video := avatar(t, c, "Hello, and welcome to the product tour.")
	s.advance(t, time.Hour)
	pending := avatar(t, s.client(t), "This one is still rendering.")

	do(t, ctx, openWithKey(s.ui, s.key),
		chromedp.WaitVisible(generation(video.ID, `[data-status="done"] video`)),
		chromedp.WaitVisible(generation(pending.ID, "")),
		chromedp.WaitVisible(chromedp.CSS(`#deliveries li[data-key="delivered 2"]`)))
	for _, shot := range []struct {
		name          string
		width, height int64
		mobile        bool
	}{
		{"page-desktop.png", 1024, 0, false}, // as tall as the page
		{"page-phone.png", 390, 844, true},
	} {
		opts := []chromedp.EmulateViewportOption{}
		if shot.mobile {
			opts = append(opts, chromedp.EmulateMobile, chromedp.EmulatePortrait)
		}
		do(t, ctx, chromedp.EmulateViewport(shot.width, max(shot.height, 800), opts...))
		if shot.height == 0 {
			tall := eval[int64](t, ctx, `document.documentElement.scrollHeight`)
			do(t, ctx, chromedp.EmulateViewport(shot.width, min(tall, 2100), opts...))
		}
		assert.Equal(t, shot.width, eval[int64](t, ctx, `document.documentElement.scrollWidth`), "%s: nothing wider than the screen", shot.name)
		// Every player shows its length, and nothing is still loading.
		eval[bool](t, ctx, `Promise.all([...document.querySelectorAll("video, audio")].map(m => m.readyState >= 1 ||
  new Promise(r => m.addEventListener("loadedmetadata", r, { once: true })))).then(() => new Promise(r => setTimeout(() => r(true), 300)))`)
		png := get(t, ctx, chromedp.CaptureScreenshot())
		assert.Less(t, len(png), 300<<10, shot.name)
		require.NoError(t, os.WriteFile(filepath.Join(dir, shot.name), png, 0o644))
	}
}
