package page_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/refserver"
	"github.com/mediagen/mediagen-go/internal/refserver/delivery"
	"github.com/mediagen/mediagen-go/internal/refserver/page"
)

const key, other = "mg_test_page", "mg_test_other"

// env is a reference server with the page in front of it, on a fake clock.
type env struct {
	t     *testing.T
	clock *refserver.FakeClock
	srv   *refserver.Server
	ts    *httptest.Server
}

func newEnv(t *testing.T, opts page.Options) *env {
	e := &env{t: t, clock: refserver.NewFakeClock(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))}
	e.srv = refserver.New(refserver.WithClock(e.clock), refserver.WithProject(key, 10), refserver.WithProject(other, 10),
		refserver.WithAllowHTTPWebhooks(), refserver.WithWebhookDelivery(delivery.Options{RetryDelay: 10 * time.Millisecond}))
	ui := page.Handler(e.srv, opts)
	e.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if page.IsPath(r.URL.Path) {
			ui.ServeHTTP(w, r)
			return
		}
		e.srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { e.ts.Close(); e.srv.Close() })
	return e
}

// get fetches path with the Authorization headers given.
func (e *env) get(path string, auth ...string) (*http.Response, string) {
	req, err := http.NewRequest(http.MethodGet, e.ts.URL+path, nil)
	require.NoError(e.t, err)
	for _, a := range auth {
		req.Header.Add("Authorization", a)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return resp, string(b)
}

// create submits a generation as apiKey through the API.
func (e *env) create(apiKey, feature string, args map[string]any, webhookURL string) mediagen.Generation {
	body, _ := json.Marshal(map[string]any{"feature": feature, "args": args, "webhookUrl": webhookURL})
	req, err := http.NewRequest(http.MethodPost, e.ts.URL+"/v3/generations", bytes.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Authorization", apiKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	var out struct{ Generation mediagen.Generation }
	require.Equal(e.t, http.StatusOK, resp.StatusCode)
	require.NoError(e.t, json.NewDecoder(resp.Body).Decode(&out))
	return out.Generation
}

func TestShellHoldsNoProjectAndLabelsEveryInput(t *testing.T) {
	e := newEnv(t, page.Options{TestControl: true})
	e.create(key, "image/generation", map[string]any{"prompt": "a kite"}, "")
	resp, body := e.get("/ui/", key)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	assert.NotContains(t, body, "gen_", "the page itself shows no project")
	assert.Contains(t, body, `<meta name="viewport" content="width=device-width, initial-scale=1">`)
	assert.Contains(t, body, `<html lang="en">`)

	nonce := regexp.MustCompile(`<script nonce="([^"]+)">`).FindStringSubmatch(body)
	require.Len(t, nonce, 2)
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'nonce-"+nonce[1]+"'")
	assert.Contains(t, body, `const store = "mediagen-api-key", control = "/test/v1";`)

	inputs := regexp.MustCompile(`<input id="([^"]+)"`).FindAllStringSubmatch(body, -1)
	assert.Len(t, inputs, 9, "the key, the clock, the balance and six fault fields")
	for _, in := range inputs {
		assert.Contains(t, body, `<label for="`+in[1]+`"`, "input %s has a label", in[1])
	}
	assert.Contains(t, body, "Advance 1 minute")

	_, body = e.get("/ui/")
	assert.Contains(t, body, "Set the faults")
	e2 := newEnv(t, page.Options{})
	_, body = e2.get("/ui/")
	assert.NotContains(t, body, "Set the faults", "no controls without the test-control API")
	assert.Contains(t, body, "-test-control")

	resp, _ = e.get("/ui")
	assert.Equal(t, http.StatusMovedPermanently, resp.StatusCode)
	assert.Equal(t, "/ui/", resp.Header.Get("Location"))
	resp, _ = e.get("/ui/nothing")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestViewNeedsTheKeyOfAProject(t *testing.T) {
	e := newEnv(t, page.Options{})
	g := e.create(key, "image/generation", map[string]any{"prompt": "a kite"}, "")
	for name, auth := range map[string][]string{
		"none": nil, "empty": {""}, "wrong": {"mg_test_wrong"}, "bearer": {"Bearer " + key}, "two": {key, key},
	} {
		resp, body := e.get("/ui/view", auth...)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, name)
		assert.NotContains(t, body, g.ID, name)
		assert.NotContains(t, body, "$", name)
	}
	_, body := e.get("/ui/view", other)
	assert.NotContains(t, body, g.ID, "another project's key shows its own project only")
	assert.Contains(t, body, "No generations yet.")
}

func TestViewShowsGenerationsNewestFirstWithOutputsEscaped(t *testing.T) {
	e := newEnv(t, page.Options{})
	img := e.create(key, "image/generation", map[string]any{"prompt": `<script>alert("x")</script> a kite`}, "")
	e.clock.Advance(time.Second)
	voice := e.create(key, "audio/voiceover", map[string]any{"voiceId": "ava-warm-narrator", "script": "Hello there."}, "")
	e.clock.Advance(time.Second)
	video := e.create(key, "video/avatar", map[string]any{"voiceId": "ava-warm-narrator", "script": "Welcome to the tour.", "permissionConfirmed": true}, "")

	_, body := e.get("/ui/view", key)
	assert.Contains(t, body, `data-status="pending"`)
	assert.NotContains(t, body, "<video", "no output before the render ends")
	assert.Less(t, strings.Index(body, video.ID), strings.Index(body, voice.ID), "newest first")
	assert.Less(t, strings.Index(body, voice.ID), strings.Index(body, img.ID))

	e.clock.Advance(10 * time.Minute)
	e.srv.Settle()
	resp, body := e.get("/ui/view", key)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotContains(t, body, "<script>", "prompts are escaped")
	assert.Contains(t, body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; a kite")
	assert.Contains(t, body, `alt="Image: image/generation, &lt;script&gt;`)
	assert.Regexp(t, `<video controls playsinline preload="metadata" src="`+regexp.QuoteMeta(e.ts.URL)+`/storage/[^"]+" poster="[^"]+" width="\d+" height="\d+" aria-label="Video: video/avatar, Welcome to the tour."`, body)
	assert.Regexp(t, `<audio controls preload="metadata" src="`+regexp.QuoteMeta(e.ts.URL)+`/storage/`, body)
	assert.Contains(t, body, `<img src="`+e.ts.URL+`/storage/`)
	assert.Equal(t, 3, strings.Count(body, `data-status="done"`))
	assert.Regexp(t, `<dd id="balance">\$9\.\d{2,4}</dd>`, body, "10 USD less the charges")
	assert.Contains(t, body, "2026-03-04 05:16:09", "the server's clock")
	assert.Contains(t, body, "No deliveries yet")
}

func TestViewShowsEachDeliveryAttempt(t *testing.T) {
	e := newEnv(t, page.Options{})
	var calls atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(hook.Close)
	g := e.create(key, "image/generation", map[string]any{"prompt": "a kite"}, hook.URL+"/hook")
	e.clock.Advance(time.Minute)
	e.srv.Settle()
	e.srv.WaitDeliveries()

	_, body := e.get("/ui/view", key)
	assert.Contains(t, body, `id="dlv-generation-done-`+g.ID+`" data-key="delivered 2"`)
	assert.Contains(t, body, "<code>"+hook.URL+"/hook</code>")
	assert.Equal(t, 2, strings.Count(body, `<tr class="attempt">`))
	assert.Contains(t, body, "<td>1</td><td>503</td>")
	assert.Contains(t, body, "<td>2</td><td>200</td>")
	assert.Contains(t, body, "<code>"+strconv.FormatInt(e.clock.Now().Unix(), 10)+"</code>", "X-Service-Timestamp")
	assert.Regexp(t, `<code class="sig">sha256=[0-9a-f]{64}</code>`, body, "X-Service-Signature")
	_, body = e.get("/ui/view", other)
	assert.NotContains(t, body, g.ID)
}
