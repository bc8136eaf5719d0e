package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/needs"
	"github.com/mediagen/mediagen-go/internal/refserver/serve"
)

// uiServer is `mediagen serve -ui -test-control -allow-http-webhooks` run in
// this process, with what it printed.
type uiServer struct {
	base, ui, control, key string
}

// startUIServer runs the serve command with the page on until the test
// ends, at render scale 1 so that renders wait for the clock to move.
func startUIServer(t *testing.T) uiServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := serve.Command{Name: "mediagen serve"}.Run(ctx, []string{
			"-addr", "127.0.0.1:0", "-ui", "-test-control", "-allow-http-webhooks", "-balance", "50",
		}, pw, io.Discard)
		pw.CloseWithError(err)
		errc <- err
	}()
	vars := map[string]string{}
	sc := bufio.NewScanner(pr)
	for vars["MEDIAGEN_UI_URL"] == "" && sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		vars[k] = v
	}
	require.NoError(t, sc.Err())
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-errc)
	})
	s := uiServer{base: vars["MEDIAGEN_BASE_URL"], ui: vars["MEDIAGEN_UI_URL"], control: vars["MEDIAGEN_TEST_CONTROL_URL"], key: vars["MEDIAGEN_API_KEY"]}
	require.Equal(t, s.base+"/ui/", s.ui)
	return s
}

// client is the public client on the server's project.
func (s uiServer) client(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(s.key, append([]client.Option{client.WithBaseURL(s.base)}, opts...)...)
	require.NoError(t, err)
	return c
}

// advance moves the server's clock through the test-control API.
func (s uiServer) advance(t *testing.T, d time.Duration) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.control+"/clock/advance", strings.NewReader(fmt.Sprintf(`{"seconds":%g}`, d.Seconds())))
	require.NoError(t, err)
	req.Header.Set("Authorization", s.key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// balance reads the project's balance through the test-control API.
func (s uiServer) balance(t *testing.T) float64 {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.control+"/balance", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", s.key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b struct{ Balance float64 }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&b))
	return b.Balance
}

// avatar submits a short video through the public client.
func avatar(t *testing.T, c *client.Client, script string) *mediagen.Generation {
	t.Helper()
	g, err := c.CreateGeneration(context.Background(), client.AvatarArgs{
		VoiceID: "ava-warm-narrator", Script: script, PermissionConfirmed: true, AspectRatio: "16:9",
	})
	require.NoError(t, err)
	return g
}

// browserWidth and browserHeight are the desktop window the tests use.
const browserWidth, browserHeight = 1280, 900

// newBrowser starts headless Chromium for one test, with the flags a
// machine without network needs, and returns the context of its tab, which
// ends after 90 s.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium; runs without -short")
	}
	path := needs.Program(t, "chromium", "chromium")
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(browserWidth, browserHeight),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"), chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	// The first run starts the browser and must not carry the deadline.
	require.NoError(t, chromedp.Do(tab), "start Chromium")
	ctx, cancel := context.WithTimeout(tab, 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// do runs steps in the tab.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, steps...))
}

// get runs one action in the tab and returns its value.
func get[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	require.NoError(t, err)
	return v
}

// eval evaluates a JavaScript expression in the tab, awaiting the promise
// it may return.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	return get(t, ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// openWithKey opens the page and gives it key, as a person does.
func openWithKey(url, key string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.ID("key")),
		chromedp.SendKeys(chromedp.ID("key"), key),
		chromedp.Click(chromedp.CSS(`#key-form button[type="submit"]`)),
	)
}

// generation selects the list item of a generation.
func generation(id, more string) chromedp.CSS {
	return chromedp.CSS(`li[id="` + id + `"]` + more)
}

// playScript plays the video of generation %q muted until it advanced, and
// reports its state.
const playScript = `(async id => {
  const v = document.querySelector('li[id="' + id + '"] video');
  v.muted = true;
  await v.play();
  const start = performance.now();
  while (v.readyState < 2 || v.currentTime < 0.3) {
    if (performance.now() - start > 15000) throw new Error('stalled: readyState ' + v.readyState + ' at ' + v.currentTime + ' s');
    await new Promise(r => setTimeout(r, 50));
  }
  v.pause();
  return { readyState: v.readyState, duration: v.duration, currentTime: v.currentTime, width: v.videoWidth };
})(%q)`

func TestPageListsAndPlaysAGeneratedVideo(t *testing.T) {
	s := startUIServer(t)
	ctx := newBrowser(t)
	c := s.client(t)
	g := avatar(t, c, "Hello, and welcome to the product tour of the reference server.")
	s.advance(t, time.Hour)
	g, err := c.GetGeneration(context.Background(), g.ID)
	require.NoError(t, err)
	require.Equal(t, mediagen.GenerationStatusDone, g.Status)
	require.Positive(t, g.Output.DurationMs)

	done := generation(g.ID, `[data-status="done"] video`)
	do(t, ctx, openWithKey(s.ui, s.key), chromedp.WaitVisible(done))
	assert.Equal(t, "video/avatar", get(t, ctx, chromedp.Text(generation(g.ID, " h3"))))
	assert.InDelta(t, 50-g.BalanceUsed, s.balance(t), 1e-9)
	shown, err := strconv.ParseFloat(strings.TrimPrefix(get(t, ctx, chromedp.Text(chromedp.ID("balance"))), "$"), 64)
	require.NoError(t, err)
	assert.InDelta(t, 50-g.BalanceUsed, shown, 1e-9, "the balance less the charge")
	played := eval[struct {
		ReadyState  int
		Duration    float64
		CurrentTime float64
		Width       int
	}](t, ctx, fmt.Sprintf(playScript, g.ID))
	assert.GreaterOrEqual(t, played.ReadyState, 2, "a frame is decoded")
	assert.InDelta(t, float64(g.Output.DurationMs)/1000, played.Duration, 0.1, "the generation's length")
	assert.GreaterOrEqual(t, played.CurrentTime, 0.3, "it played")
	assert.Equal(t, g.Output.Width, played.Width)

	// The key is kept in the tab: a reload shows the project again without
	// asking.
	do(t, ctx, chromedp.Reload(), chromedp.WaitVisible(done))
	assert.True(t, eval[bool](t, ctx, `document.getElementById("ask").hidden`))
}

// uiReceiver answers webhook deliveries, 500 to the first, and keeps
// the signature headers of each.
type uiReceiver struct {
	mu         sync.Mutex
	signatures []string
}

func (h *uiReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.signatures = append(h.signatures, r.Header.Get("X-Service-Signature"))
	if len(h.signatures) == 1 {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *uiReceiver) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.signatures...)
}

func TestPageShowsADeliveryWithItsAttempts(t *testing.T) {
	s := startUIServer(t)
	ctx := newBrowser(t)
	rv := &uiReceiver{}
	hook := httptest.NewServer(rv)
	t.Cleanup(hook.Close)
	c := s.client(t, client.WithWebhookURL(hook.URL+"/hook"))
	g, err := c.CreateGeneration(context.Background(), client.ImageGenerationArgs{Prompt: "a red kite over the sea"})
	require.NoError(t, err)
	s.advance(t, time.Minute)

	item := `li[id="dlv-generation-done-` + g.ID + `"]`
	do(t, ctx, openWithKey(s.ui, s.key),
		chromedp.WaitVisible(generation(g.ID, `[data-status="done"] img`)),
		// The retry comes 2 s after the refused first attempt.
		chromedp.WaitVisible(chromedp.CSS(item+`[data-state="delivered"]`)))
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll('`+item+` tr.attempt')].map(r => r.innerText)`)
	text := get(t, ctx, chromedp.Text(chromedp.CSS(item)))
	sigs := rv.got()
	require.Len(t, sigs, 2)
	require.Len(t, rows, 2, "each attempt is a row")
	assert.Regexp(t, `^1\s+500\s+\d+ ms\s+\d+\s+`, rows[0])
	assert.Regexp(t, `^2\s+204\s+\d+ ms\s+\d+\s+`, rows[1])
	for i, sig := range sigs {
		assert.Contains(t, rows[i], sig, "attempt %d shows the signature it carried", i+1)
	}
	assert.Contains(t, text, hook.URL+"/hook")
	assert.Contains(t, text, "generation.done")
}

func TestPageButtonAdvancesTheClockAndTheRenderEndsWithoutAReload(t *testing.T) {
	s := startUIServer(t)
	ctx := newBrowser(t)
	g := avatar(t, s.client(t), "A render that waits for the clock.")

	status := generation(g.ID, " .status")
	do(t, ctx, openWithKey(s.ui, s.key), chromedp.WaitVisible(status))
	assert.Contains(t, []string{"pending", "running"}, get(t, ctx, chromedp.Text(status)), "a render at scale 1 takes a minute")
	assert.True(t, eval[bool](t, ctx, `window.sameDocument = true`))
	do(t, ctx, chromedp.Click(chromedp.CSS(`button[data-advance="3600"]`)),
		chromedp.WaitVisible(generation(g.ID, `[data-status="done"] video`)))
	assert.True(t, eval[bool](t, ctx, `window.sameDocument === true`), "the page was not reloaded")
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS("#control-status:not(:empty)"))) // the page's own refresh may show the render first
	assert.Contains(t, get(t, ctx, chromedp.Text(chromedp.ID("control-status"))), "Clock advanced by 3600 s")
}

func TestPageWithAWrongKeyShowsNothing(t *testing.T) {
	s := startUIServer(t)
	ctx := newBrowser(t)
	g, err := s.client(t).CreateGeneration(context.Background(), client.ImageGenerationArgs{Prompt: "a secret kite"})
	require.NoError(t, err)

	// An empty paragraph counts as visible, so wait for the refusal's text.
	do(t, ctx, openWithKey(s.ui, "mg_test_wrong"), chromedp.WaitVisible(chromedp.CSS("#key-error:not(:empty)")))
	assert.Equal(t, "That key opens no project on this server.", get(t, ctx, chromedp.Text(chromedp.ID("key-error"))))
	time.Sleep(1500 * time.Millisecond) // past the page's next refresh, which runs without a key
	assert.Equal(t, "That key opens no project on this server.", get(t, ctx, chromedp.Text(chromedp.ID("key-error"))),
		"the refusal stays until another key is given")
	assert.Zero(t, eval[int](t, ctx, `document.getElementById("view").children.length`))
	assert.Nil(t, eval[*string](t, ctx, `sessionStorage.getItem("mediagen-api-key")`), "a wrong key is not kept")
	assert.True(t, eval[bool](t, ctx, `document.getElementById("controls").hidden`))
	body := eval[string](t, ctx, `document.documentElement.outerHTML`)
	assert.NotContains(t, body, g.ID)
	assert.NotContains(t, body, "secret kite")
	assert.NotContains(t, body, `id="balance"`)
}
