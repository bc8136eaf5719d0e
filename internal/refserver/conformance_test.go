package refserver_test

// A black-box conformance probe of the interface document
// (spec/interface-spec.md) and the decisions of DESIGN.md, against the
// reference server over raw HTTP. Nothing here reads the server's state:
// the only handles used besides HTTP are the constructor options, the fake
// clock and Settle (to make time pass), and the webhook secret the command
// prints. Balances are read black-box too: a call dearer than any test
// balance answers 402 with the balance in its body.
//
// Subtests are named after the statement they check, quoting the document.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/refserver"
	"github.com/mediagen/mediagen-go/webhook"
)

// Project keys of the probe. cfKey is the command's project; the others
// have balances small enough for the 402 probe to read them.
const (
	cfKey   = "K"
	cfOther = "OTHER" // another tenant
	cfBill  = "BILL"  // balance 10, for billing checks
	cfPoor  = "POOR"  // balance 0.01

	cfMaxFile    = 31457280 // 30 MB as DESIGN.md fixes it
	cfCatalogID  = "62fff951-2ec9-4503-9acb-6f303a11a05d"
	cfCatalogSlg = "james-documentary-narrator"
	cfRetiredID  = "8126c60a-76d6-450b-a3da-617d8ea44b4f"
	cfRetiredSlg = "noah-classic-narrator"
	cfVoiceSlug  = "ava-warm-narrator"
)

var cfStart = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// cf is one reference server behind httptest, on a fake clock.
type cf struct {
	t     *testing.T
	srv   *refserver.Server
	clock *refserver.FakeClock
	url   string
}

func newCF(t *testing.T, opts ...refserver.Option) *cf {
	t.Helper()
	clock := refserver.NewFakeClock(cfStart)
	all := []refserver.Option{
		refserver.WithProject(cfKey, 100),
		refserver.WithProject(cfOther, 100),
		refserver.WithProject(cfBill, 10),
		refserver.WithProject(cfPoor, 0.01),
		refserver.WithRenderScale(0.01),
		refserver.WithClock(clock),
	}
	srv := refserver.New(append(all, opts...)...)
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &cf{t: t, srv: srv, clock: clock, url: ts.URL}
}

// at returns c reporting to t, for use inside a subtest.
func (c *cf) at(t *testing.T) *cf {
	cp := *c
	cp.t = t
	return &cp
}

// advance moves time on and applies what became due.
func (c *cf) advance(d time.Duration) {
	c.clock.Advance(d)
	c.srv.Settle()
}

// finish lets every render and training started so far end.
func (c *cf) finish() { c.advance(5 * time.Minute) }

type cfResp struct {
	status int
	header http.Header
	body   []byte
}

func (r cfResp) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

// obj decodes the body as a JSON object.
func (r cfResp) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body %q", r.body)
	return m
}

// send performs req as is.
func (c *cf) send(req *http.Request) cfResp {
	c.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return cfResp{status: resp.StatusCode, header: resp.Header, body: b}
}

// call sends a request to the API. body is nil, a string (raw JSON) or any
// value encoded as JSON. key "" sends no Authorization header.
func (c *cf) call(method, path, key string, body any) cfResp {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(c.t, err)
		rd = bytes.NewReader(raw)
	}
	u := path
	if !strings.HasPrefix(u, "http") {
		u = c.url + path
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, u, rd)
	require.NoError(c.t, err)
	if key != "" {
		req.Header.Set("Authorization", key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.send(req)
}

// fetch GETs an absolute URL (a signed asset) without Authorization.
func (c *cf) fetch(u string) cfResp {
	c.t.Helper()
	return c.call(http.MethodGet, u, "", nil)
}

// errCode checks the error body {"error":{"code","message"}} and returns
// the code.
func errCode(t *testing.T, r cfResp) string {
	t.Helper()
	m := r.obj(t)
	require.Len(t, m, 1, "an error body has the one key error: %s", r.body)
	e, ok := m["error"].(map[string]any)
	require.True(t, ok, "error is an object: %s", r.body)
	assert.Equal(t, []string{"code", "message"}, keys(e), "DESIGN: {error:{code,message}}: %s", r.body)
	assert.NotEmpty(t, e["message"], "error.message")
	code, _ := e["code"].(string)
	assert.NotEmpty(t, code, "error.code")
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	return code
}

// wantError asserts the status and the DESIGN.md code of an error answer.
func wantError(t *testing.T, r cfResp, status int, code string) {
	t.Helper()
	require.Equal(t, status, r.status, "answer %s", r)
	assert.Equal(t, code, errCode(t, r))
}

// keys returns the sorted keys of m.
func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ---------- fixtures ----------

func cfPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 48, 32))
	for x := 8; x < 40; x++ {
		for y := 8; y < 24; y++ {
			img.Set(x, y, color.RGBA{R: 20, G: 90, B: 200, A: 255})
		}
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// cfWAV is a PCM WAVE file of the given length: 8 kHz, mono, 8 bit.
func cfWAV(d time.Duration) []byte {
	const rate = 8000
	n := int(d.Seconds() * rate)
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + n))
	b.WriteString("WAVEfmt ")
	w(uint32(16))
	w(uint16(1))    // PCM
	w(uint16(1))    // mono
	w(uint32(rate)) // sample rate
	w(uint32(rate)) // byte rate
	w(uint16(1))    // block align
	w(uint16(8))    // bits per sample
	b.WriteString("data")
	w(uint32(n))
	for i := range n {
		b.WriteByte(byte(128 + 40*((i/20)%2)))
	}
	return b.Bytes()
}

func cfBox(typ string, parts ...[]byte) []byte {
	body := bytes.Join(parts, nil)
	return append(binary.BigEndian.AppendUint32([]byte(nil), uint32(8+len(body))), append([]byte(typ), body...)...)
}

func cfU32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// cfMP4 is an ISO BMFF file of the major brand with one track per handler
// ("vide", "soun"), each lasting d, whose one sample lies in the mdat.
func cfMP4(brand string, d time.Duration, handlers ...string) []byte {
	const scale = 1000
	ticks := uint32(d.Milliseconds())
	// 4 KB a second, as 32 kbit/s AAC speech takes, in one sample.
	media := make([]byte, 4*d.Milliseconds())
	ftyp := cfBox("ftyp", []byte(brand), cfU32(0), []byte("isom"))
	moov := func(offset uint32) []byte {
		boxes := [][]byte{cfBox("mvhd", cfU32(0), cfU32(0), cfU32(0), cfU32(scale), cfU32(ticks), make([]byte, 80))}
		for _, h := range handlers {
			mdhd := cfBox("mdhd", cfU32(0), cfU32(0), cfU32(0), cfU32(scale), cfU32(ticks), []byte{0x55, 0xc4, 0, 0})
			hdlr := cfBox("hdlr", cfU32(0), cfU32(0), []byte(h), make([]byte, 12), []byte{0})
			var entries []byte
			if h == "soun" { // an mp4a entry: mono, 16-bit, 44.1 kHz
				entries = cfBox("mp4a", make([]byte, 6), []byte{0, 1}, make([]byte, 8), []byte{0, 1, 0, 16, 0, 0, 0, 0}, cfU32(44100<<16))
			}
			stbl := cfBox("stbl",
				cfBox("stsd", cfU32(0), cfU32(uint32(min(len(entries), 1))), entries),
				cfBox("stsc", cfU32(0), cfU32(1), cfU32(1), cfU32(1), cfU32(1)),
				cfBox("stsz", cfU32(0), cfU32(uint32(len(media))), cfU32(1)),
				cfBox("stco", cfU32(0), cfU32(1), cfU32(offset)))
			boxes = append(boxes, cfBox("trak", cfBox("mdia", mdhd, hdlr, cfBox("minf", stbl))))
		}
		return cfBox("moov", boxes...)
	}
	offset := uint32(len(ftyp) + len(moov(0)) + 8)
	return bytes.Join([][]byte{ftyp, moov(offset), cfBox("mdat", media)}, nil)
}

type cfPart struct {
	name, ctype string
	data        []byte
}

// upload posts parts to POST /v3/files/upload under the field "files".
func (c *cf) upload(key string, parts ...cfPart) cfResp {
	c.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="files"; filename=%q`, p.name))
		if p.ctype != "" {
			h.Set("Content-Type", p.ctype)
		}
		w, err := mw.CreatePart(h)
		require.NoError(c.t, err)
		_, err = w.Write(p.data)
		require.NoError(c.t, err)
	}
	require.NoError(c.t, mw.Close())
	req, err := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.url+"/v3/files/upload", &body)
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if key != "" {
		req.Header.Set("Authorization", key)
	}
	return c.send(req)
}

// fileIDs uploads parts and returns their ids.
func (c *cf) fileIDs(key string, parts ...cfPart) []string {
	c.t.Helper()
	r := c.upload(key, parts...)
	require.Equal(c.t, http.StatusOK, r.status, "upload: %s", r)
	var out struct{ Files []struct{ ID string } }
	require.NoError(c.t, json.Unmarshal(r.body, &out))
	ids := make([]string, len(out.Files))
	for i, f := range out.Files {
		ids[i] = f.ID
	}
	return ids
}

func (c *cf) image(key string) string {
	return c.fileIDs(key, cfPart{"logo.png", "image/png", cfPNG(c.t)})[0]
}

func (c *cf) textFile(key string) string {
	return c.fileIDs(key, cfPart{"notes.txt", "text/plain", []byte("plain words, not a picture\n")})[0]
}

func (c *cf) sample(key string, d time.Duration) string {
	return c.fileIDs(key, cfPart{"voice.wav", "audio/wav", cfWAV(d)})[0]
}

// create posts a generation.
func (c *cf) create(key, feat string, args map[string]any, hook string) cfResp {
	c.t.Helper()
	body := map[string]any{"feature": feat, "args": args}
	if hook != "" {
		body["webhookUrl"] = hook
	}
	return c.call(http.MethodPost, "/v3/generations", key, body)
}

// gen posts a generation that must be accepted and returns it.
func (c *cf) gen(key, feat string, args map[string]any) map[string]any {
	c.t.Helper()
	r := c.create(key, feat, args, "")
	require.Equal(c.t, http.StatusOK, r.status, "create %s: %s", feat, r)
	return r.obj(c.t)["generation"].(map[string]any)
}

func (c *cf) getGen(key, id string) cfResp {
	return c.call(http.MethodGet, "/v3/generations/"+id, key, nil)
}

func (c *cf) mustGetGen(key, id string) map[string]any {
	c.t.Helper()
	r := c.getGen(key, id)
	require.Equal(c.t, http.StatusOK, r.status, "get: %s", r)
	return r.obj(c.t)["generation"].(map[string]any)
}

// list answers GET /v3/generations with the raw query.
func (c *cf) list(key, query string) (ids []string, next any, page map[string]any) {
	c.t.Helper()
	r := c.call(http.MethodGet, "/v3/generations?"+query, key, nil)
	require.Equal(c.t, http.StatusOK, r.status, "list: %s", r)
	page = r.obj(c.t)
	rows, ok := page["generations"].([]any)
	require.True(c.t, ok, "generations is an array: %s", r.body)
	for _, g := range rows {
		ids = append(ids, g.(map[string]any)["id"].(string))
	}
	return ids, page["nextCursor"], page
}

// balance reads a project's balance black-box: an avatar clip of 5,000
// characters at 1080p costs 17.25 USD, more than any probe balance, so it
// answers 402 with the balance.
func (c *cf) balance(key string) float64 {
	c.t.Helper()
	r := c.create(key, "video/avatar", map[string]any{
		"voiceId": cfVoiceSlug, "script": strings.Repeat("a", 5000), "resolution": "1080p", "permissionConfirmed": true,
	}, "")
	require.Equal(c.t, http.StatusPaymentRequired, r.status, "balance probe: %s", r)
	return r.obj(c.t)["error"].(map[string]any)["balance"].(float64)
}

// price reads a feature's base price from GET /v3/pricing.
func (c *cf) pricing() map[string]any {
	c.t.Helper()
	r := c.call(http.MethodGet, "/v3/pricing", cfKey, nil)
	require.Equal(c.t, http.StatusOK, r.status, "pricing: %s", r)
	return r.obj(c.t)["prices"].(map[string]any)
}

func (c *cf) price(feat string) float64 {
	return c.pricing()[feat].(map[string]any)["price"].(float64)
}

func (c *cf) multiplier(feat, arg, value string) float64 {
	e := c.pricing()[feat].(map[string]any)
	return e["variants"].(map[string]any)[arg].(map[string]any)[value].(float64)
}

// clone posts a voice clone.
func (c *cf) clone(key string, body map[string]any) cfResp {
	return c.call(http.MethodPost, "/v3/voices", key, body)
}

func parseTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, ok := v.(string)
	require.True(t, ok, "a date-time string, got %v", v)
	tm, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return tm
}

// sniff checks that a signed asset URL answers without Authorization with
// bytes of the media type mime.
func sniff(t *testing.T, c *cf, u, mime string) {
	t.Helper()
	r := c.fetch(u)
	require.Equal(t, http.StatusOK, r.status, "asset %s: %s", u, r.status)
	assert.Equal(t, mime, r.header.Get("Content-Type"))
	want := map[string]string{"image/png": "image/png", "audio/wav": "audio/wave", "video/mp4": "video/mp4"}[mime]
	require.NotEmpty(t, want, "a known mime %s", mime)
	assert.Equal(t, want, http.DetectContentType(r.body), "the bytes are %s", mime)
}

// ---------- authentication ----------

func TestConformanceAuthentication(t *testing.T) {
	t.Parallel()
	c := newCF(t)
	endpoints := []struct{ method, path string }{
		{http.MethodPost, "/v3/generations"},
		{http.MethodGet, "/v3/generations"},
		{http.MethodGet, "/v3/generations/gen_x"},
		{http.MethodDelete, "/v3/generations/gen_x"},
		{http.MethodPost, "/v3/files/upload"},
		{http.MethodPost, "/v3/files/upload-url"},
		{http.MethodGet, "/v3/pricing"},
		{http.MethodPost, "/v3/voices"},
		{http.MethodGet, "/v3/voices"},
		{http.MethodGet, "/v3/voices/" + cfCatalogID},
		{http.MethodDelete, "/v3/voices/" + cfCatalogID},
		{http.MethodPut, "/v3/voices/" + cfCatalogID + "/favorite"},
		{http.MethodDelete, "/v3/voices/" + cfCatalogID + "/favorite"},
		{http.MethodGet, "/v3/templates"},
		{http.MethodGet, "/v3/templates/pvw_x"},
		{http.MethodPost, "/v3/mcp"},
		{http.MethodGet, "/v3/mcp"},
		{http.MethodDelete, "/v3/mcp"},
		{http.MethodGet, "/v3/openapi.json"},
	}
	t.Run("every endpoint: a missing or invalid key answers 401, no Bearer prefix", func(t *testing.T) {
		c := c.at(t)
		for _, ep := range endpoints {
			for _, key := range []string{"", "Bearer " + cfKey, "bearer " + cfKey, "wrong", "k", cfKey + "x"} {
				r := c.call(ep.method, ep.path, key, "{}")
				require.Equal(t, http.StatusUnauthorized, r.status, "%s %s with %q: %s", ep.method, ep.path, key, r)
				assert.Equal(t, "unauthorized", errCode(t, r), "%s %s", ep.method, ep.path)
				assert.NotContains(t, string(r.body), cfKey+"\"", "the key is not echoed")
			}
		}
	})
	t.Run("the key value alone, as <API_KEY>, is accepted on every endpoint", func(t *testing.T) {
		c := c.at(t)
		for _, ep := range endpoints {
			r := c.call(ep.method, ep.path, cfKey, "{}")
			assert.NotEqual(t, http.StatusUnauthorized, r.status, "%s %s: %s", ep.method, ep.path, r)
		}
	})
	t.Run("the same applies to the agent endpoint", func(t *testing.T) {
		c := c.at(t)
		r := c.call(http.MethodPost, "/v3/mcp", "Bearer "+cfKey, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		wantError(t, r, http.StatusUnauthorized, "unauthorized")
	})
	t.Run("except the storage PUT, which carries no Authorization header", func(t *testing.T) {
		c := c.at(t)
		up := c.call(http.MethodPost, "/v3/files/upload-url", cfKey, map[string]any{"bytes": 5, "contentType": "text/plain"})
		require.Equal(t, http.StatusOK, up.status, "%s", up)
		u := up.obj(t)["uploadUrl"].(string)
		put := func(auth string) cfResp {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, u, strings.NewReader("hello"))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "text/plain")
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			return c.send(req)
		}
		assert.Equal(t, http.StatusForbidden, put(cfKey).status, "storage refuses an Authorization header")
		ok := put("")
		assert.Equal(t, http.StatusOK, ok.status, "%s", ok)
	})
}

// ---------- generations ----------

func TestConformanceCreateGeneration(t *testing.T) {
	t.Parallel()
	c := newCF(t)

	t.Run("200: { generation } with status pending", func(t *testing.T) {
		c := c.at(t)
		args := map[string]any{"prompt": "a lighthouse at dusk", "aspectRatio": "16:9", "fineDetails": true}
		r := c.create(cfKey, "image-generation", args, "")
		require.Equal(t, http.StatusOK, r.status, "%s", r)
		env := r.obj(t)
		assert.Equal(t, []string{"generation"}, keys(env))
		g := env["generation"].(map[string]any)
		assert.Equal(t, "pending", g["status"])
		t.Run("feature: Feature key as submitted, canonical or legacy spelling", func(t *testing.T) {
			assert.Equal(t, "image-generation", g["feature"])
		})
		t.Run("kind: one of image, video, audio, text", func(t *testing.T) {
			assert.Equal(t, "image", g["kind"])
		})
		t.Run("params: The submitted args, echoed back", func(t *testing.T) {
			assert.Equal(t, map[string]any{"prompt": "a lighthouse at dusk", "aspectRatio": "16:9", "fineDetails": true}, g["params"])
		})
		t.Run("expiresAt: request time plus 24 hours", func(t *testing.T) {
			req := parseTime(t, g["requestDate"])
			assert.True(t, req.Equal(cfStart), "requestDate is the time of the request: %v", req)
			assert.True(t, parseTime(t, g["expiresAt"]).Equal(req.Add(24*time.Hour)))
		})
		t.Run("balanceUsed: Amount charged", func(t *testing.T) {
			c := c.at(t)
			want := c.price("image/generation") * c.multiplier("image/generation", "fineDetails", "on")
			assert.InDelta(t, want, g["balanceUsed"], 1e-9)
		})
		t.Run("output: Present once status is done; responseDate: Present once finished", func(t *testing.T) {
			assert.NotContains(t, g, "output")
			assert.NotContains(t, g, "responseDate")
			assert.NotEmpty(t, g["id"])
			assert.NotEmpty(t, g["projectId"])
		})
	})

	t.Run("every feature is accepted in canonical and legacy spelling", func(t *testing.T) {
		c := c.at(t)
		img := c.image(cfKey)
		argsOf := map[string]map[string]any{
			"image/self-portrait":                     {"image": img, "prompt": "p", "permissionConfirmed": true},
			"image/generation":                        {"prompt": "p"},
			"image/product-shot":                      {"image": img, "prompt": "p"},
			"image/youtube-thumbnail":                 {"prompt": "p"},
			"image/ad":                                {"image": img, "prompt": "p"},
			"video/logo-reveal":                       {"image": img, "prompt": "p"},
			string(mediagen.FeatureVideoObjectReveal): {"image": img, "prompt": "p"},
			"video/avatar":                            {"voiceId": cfVoiceSlug, "script": "hello there", "permissionConfirmed": true},
			"audio/voiceover":                         {"voiceId": cfVoiceSlug, "script": "hello there"},
		}
		legacy := map[string]string{
			"image/self-portrait": "self-portrait", "image/generation": "image-generation", "image/product-shot": "product-shot",
			"image/youtube-thumbnail": "youtube-thumbnail", "image/ad": "ad", "video/logo-reveal": "logo-reveal",
			string(mediagen.FeatureVideoObjectReveal): string(mediagen.FeatureLegacyObjectReveal), "video/avatar": "avatar-video", "audio/voiceover": "voiceover",
		}
		for feat, args := range argsOf {
			for _, spelling := range []string{feat, legacy[feat]} {
				g := c.gen(cfKey, spelling, args)
				assert.Equal(t, spelling, g["feature"])
				assert.Equal(t, strings.Split(feat, "/")[0], g["kind"], feat)
			}
		}
	})

	t.Run("400 unknown feature or invalid args; nothing charged", func(t *testing.T) {
		c := c.at(t)
		before := c.balance(cfBill)
		img := c.image(cfBill)
		txt := c.textFile(cfBill)
		wav := c.sample(cfBill, 12*time.Second)
		other := c.image(cfOther)
		bad := []struct {
			name string
			body any
		}{
			{"unknown feature", map[string]any{"feature": "image/painting", "args": map[string]any{"prompt": "p"}}},
			{"feature spelled in another case", map[string]any{"feature": "Image/Generation", "args": map[string]any{"prompt": "p"}}},
			{"feature missing", map[string]any{"args": map[string]any{"prompt": "p"}}},
			{"args (object, required) missing", map[string]any{"feature": "image/generation"}},
			{"args not an object", map[string]any{"feature": "image/generation", "args": "p"}},
			{"body not JSON", "feature=image/generation"},
			{"required argument missing", map[string]any{"feature": "image/generation", "args": map[string]any{}}},
			{"unknown argument", map[string]any{"feature": "image/generation", "args": map[string]any{"prompt": "p", "aspect_ratio": "1:1"}}},
			{"aspectRatio not allowed", map[string]any{"feature": "image/generation", "args": map[string]any{"prompt": "p", "aspectRatio": "2:1"}}},
			{"fineDetails not a boolean", map[string]any{"feature": "image/generation", "args": map[string]any{"prompt": "p", "fineDetails": "on"}}},
			{"logo-reveal aspectRatio only 16:9 or 9:16", map[string]any{"feature": "video/logo-reveal", "args": map[string]any{"image": img, "prompt": "p", "aspectRatio": "1:1"}}},
			{"logo-reveal mode intro or outro", map[string]any{"feature": "video/logo-reveal", "args": map[string]any{"image": img, "prompt": "p", "mode": "sideways"}}},
			{"logo-reveal duration 3 to 10 (2)", map[string]any{"feature": "video/logo-reveal", "args": map[string]any{"image": img, "prompt": "p", "duration": 2}}},
			{"logo-reveal duration 3 to 10 (11)", map[string]any{"feature": "video/logo-reveal", "args": map[string]any{"image": img, "prompt": "p", "duration": 11}}},
			{"logo-reveal duration an integer", map[string]any{"feature": "video/logo-reveal", "args": map[string]any{"image": img, "prompt": "p", "duration": 4.5}}},
			{"logo-reveal background a CSS hex colour", map[string]any{"feature": "video/logo-reveal", "args": map[string]any{"image": img, "prompt": "p", "background": "blue-ish"}}},
			{"logo-reveal generateAudio a boolean", map[string]any{"feature": "video/logo-reveal", "args": map[string]any{"image": img, "prompt": "p", "generateAudio": "yes"}}},
			{"resolution 720p or 1080p", map[string]any{"feature": string(mediagen.FeatureVideoObjectReveal), "args": map[string]any{"image": img, "prompt": "p", "resolution": "4k"}}},
			{"avatar script 1 to 5,000 characters", map[string]any{"feature": "video/avatar", "args": map[string]any{"voiceId": cfVoiceSlug, "script": strings.Repeat("a", 5001), "permissionConfirmed": true}}},
			{"voiceover script 1 to 20,000 characters", map[string]any{"feature": "audio/voiceover", "args": map[string]any{"voiceId": cfVoiceSlug, "script": strings.Repeat("a", 20001)}}},
			{"voiceover script empty", map[string]any{"feature": "audio/voiceover", "args": map[string]any{"voiceId": cfVoiceSlug, "script": ""}}},
			{"prompt blank", map[string]any{"feature": "image/generation", "args": map[string]any{"prompt": "   "}}},
			{"youtube-thumbnail prompt required", map[string]any{"feature": "image/youtube-thumbnail", "args": map[string]any{"image": img}}},
			{"self-portrait image required", map[string]any{"feature": "image/self-portrait", "args": map[string]any{"prompt": "p", "permissionConfirmed": true}}},
			{"avatar voiceId required", map[string]any{"feature": "video/avatar", "args": map[string]any{"script": "hi", "permissionConfirmed": true}}},
			{"voiceId of a clone of nobody", map[string]any{"feature": "video/avatar", "args": map[string]any{"voiceId": "00000000-0000-4000-8000-000000000000", "script": "hi", "permissionConfirmed": true}}},
			{"voiceover voiceId unknown", map[string]any{"feature": "audio/voiceover", "args": map[string]any{"voiceId": "nobody", "script": "hi"}}},
			{"voiceover voiceId of a retired voice", map[string]any{"feature": "audio/voiceover", "args": map[string]any{"voiceId": cfRetiredSlg, "script": "hi"}}},
			{"a file that fails validation (a text file as image)", map[string]any{"feature": "video/logo-reveal", "args": map[string]any{"image": txt, "prompt": "p"}}},
			{"a file that fails validation (audio as image)", map[string]any{"feature": "image/ad", "args": map[string]any{"image": wav, "prompt": "p"}}},
			{"file ids, never URLs", map[string]any{"feature": "image/ad", "args": map[string]any{"image": "https://example.com/logo.png", "prompt": "p"}}},
			{"file ids, never base64", map[string]any{"feature": "image/ad", "args": map[string]any{"image": "data:image/png;base64,iVBORw0KGgo=", "prompt": "p"}}},
			{"a file id of another project", map[string]any{"feature": "image/ad", "args": map[string]any{"image": other, "prompt": "p"}}},
			{"webhookUrl not https (DESIGN: 400)", map[string]any{"feature": "image/generation", "args": map[string]any{"prompt": "p"}, "webhookUrl": "http://example.com/hook"}},
			{"webhookUrl not a URL", map[string]any{"feature": "image/generation", "args": map[string]any{"prompt": "p"}, "webhookUrl": "hook"}},
			{"webhookUrl publicly reachable (loopback)", map[string]any{"feature": "image/generation", "args": map[string]any{"prompt": "p"}, "webhookUrl": "https://127.0.0.1/hook"}},
			{"webhookUrl publicly reachable (private)", map[string]any{"feature": "image/generation", "args": map[string]any{"prompt": "p"}, "webhookUrl": "https://10.1.2.3/hook"}},
			{"webhookUrl publicly reachable (localhost)", map[string]any{"feature": "image/generation", "args": map[string]any{"prompt": "p"}, "webhookUrl": "https://localhost:8443/hook"}},
		}
		for _, b := range bad {
			r := c.call(http.MethodPost, "/v3/generations", cfBill, b.body)
			require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", b.name, r)
			assert.Equal(t, "invalid_argument", errCode(t, r), b.name)
		}
		assert.InDelta(t, before, c.balance(cfBill), 1e-9, "nothing charged")
		ids, _, _ := c.list(cfBill, "")
		assert.Empty(t, ids, "no generation was created")
	})

	t.Run("webhookUrl (string, optional, https) is accepted", func(t *testing.T) {
		c := c.at(t)
		r := c.create(cfKey, "image/generation", map[string]any{"prompt": "p"}, "https://hooks.example.com/mediagen")
		assert.Equal(t, http.StatusOK, r.status, "%s", r)
	})

	t.Run("402 insufficient balance: { error: { code, message, required, balance } }", func(t *testing.T) {
		c := c.at(t)
		r := c.create(cfPoor, "image/generation", map[string]any{"prompt": "p"}, "")
		require.Equal(t, http.StatusPaymentRequired, r.status, "%s", r)
		m := r.obj(t)
		assert.Equal(t, []string{"error"}, keys(m))
		e := m["error"].(map[string]any)
		assert.Equal(t, []string{"balance", "code", "message", "required"}, keys(e))
		assert.Equal(t, "insufficient_balance", e["code"])
		assert.NotEmpty(t, e["message"])
		assert.InDelta(t, c.price("image/generation"), e["required"], 1e-9)
		assert.InDelta(t, 0.01, e["balance"], 1e-9)
		ids, _, _ := c.list(cfPoor, "")
		assert.Empty(t, ids, "nothing created")
	})

	t.Run("Request valid and balance sufficient: a balance equal to the cost is sufficient", func(t *testing.T) {
		c := c.at(t)
		exact := newCF(t, refserver.WithProject("EXACT", c.price("image/generation")))
		g := exact.at(t).gen("EXACT", "image/generation", map[string]any{"prompt": "p"})
		assert.Equal(t, "pending", g["status"])
		r := exact.at(t).create("EXACT", "image/generation", map[string]any{"prompt": "p"}, "")
		require.Equal(t, http.StatusPaymentRequired, r.status, "%s", r)
		assert.InDelta(t, 0, r.obj(t)["error"].(map[string]any)["balance"], 1e-9)
	})

	t.Run("403 when a likeness-producing feature lacks confirmed permission", func(t *testing.T) {
		c := c.at(t)
		before := c.balance(cfBill)
		img := c.image(cfBill)
		for _, tc := range []struct {
			feat string
			args map[string]any
		}{
			{"image/self-portrait", map[string]any{"image": img, "prompt": "p"}},
			{"self-portrait", map[string]any{"image": img, "prompt": "p", "permissionConfirmed": false}},
			{"video/avatar", map[string]any{"voiceId": cfVoiceSlug, "script": "hi"}},
			{"avatar-video", map[string]any{"voiceId": cfVoiceSlug, "script": "hi", "permissionConfirmed": false}},
		} {
			r := c.create(cfBill, tc.feat, tc.args, "")
			wantError(t, r, http.StatusForbidden, "permission_required")
		}
		assert.InDelta(t, before, c.balance(cfBill), 1e-9, "nothing charged")
	})
}

func TestConformanceGenerationLifecycle(t *testing.T) {
	t.Parallel()
	outcomes := map[string]refserver.Outcome{"image/ad": refserver.OutcomeError, "image/product-shot": refserver.OutcomeTimeout}
	c := newCF(t, refserver.WithOutcome(func(f string) refserver.Outcome {
		if o, ok := outcomes[f]; ok {
			return o
		}
		return refserver.OutcomeDone
	}))
	img := c.image(cfBill)

	t.Run("pending -> running -> done: output and responseDate set", func(t *testing.T) {
		c := c.at(t)
		g := c.gen(cfKey, "image/generation", map[string]any{"prompt": "p", "aspectRatio": "4:3"})
		id := g["id"].(string)
		c.advance(40 * time.Millisecond) // 10% of an 80 ms render is spent pending
		mid := c.mustGetGen(cfKey, id)
		assert.Equal(t, "running", mid["status"])
		assert.NotContains(t, mid, "output")
		c.finish()
		done := c.mustGetGen(cfKey, id)
		assert.Equal(t, "done", done["status"])
		assert.Contains(t, done, "responseDate")
		assert.False(t, parseTime(t, done["responseDate"]).Before(parseTime(t, done["requestDate"])))
		out := done["output"].(map[string]any)
		t.Run("output: exactly one of image, video, audio is present (named by the kind); mime", func(t *testing.T) {
			c := c.at(t)
			assert.Equal(t, []string{"image", "mime"}, keys(out))
			sniff(t, c, out["image"].(string), out["mime"].(string))
		})
		t.Run("GET /v3/generations/{id} 200: { generation }", func(t *testing.T) {
			c := c.at(t)
			r := c.getGen(cfKey, id)
			assert.Equal(t, []string{"generation"}, keys(r.obj(t)))
		})
	})

	t.Run("video output also carries poster, durationMs, width, height (DESIGN: always)", func(t *testing.T) {
		c := c.at(t)
		img := c.image(cfKey)
		for _, tc := range []struct {
			feat string
			args map[string]any
			ms   float64
		}{
			{"video/logo-reveal", map[string]any{"image": img, "prompt": "p", "duration": 6, "resolution": "1080p", "aspectRatio": "9:16"}, 6000},
			{"logo-reveal", map[string]any{"image": img, "prompt": "p"}, 5000},
			{string(mediagen.FeatureVideoObjectReveal), map[string]any{"image": img, "prompt": "p", "duration": 3}, 3000},
			{"video/avatar", map[string]any{"voiceId": cfVoiceSlug, "script": strings.Repeat("b", 30), "permissionConfirmed": true}, 2000},
		} {
			id := c.gen(cfKey, tc.feat, tc.args)["id"].(string)
			c.finish()
			g := c.mustGetGen(cfKey, id)
			require.Equal(t, "done", g["status"])
			out := g["output"].(map[string]any)
			assert.Equal(t, []string{"durationMs", "height", "mime", "poster", "video", "width"}, keys(out), tc.feat)
			assert.Equal(t, "video/mp4", out["mime"])
			assert.InDelta(t, tc.ms, out["durationMs"], 0.5, tc.feat)
			assert.Greater(t, out["width"], 0.0)
			assert.Greater(t, out["height"], 0.0)
			if tc.args["aspectRatio"] == "9:16" {
				assert.Greater(t, out["height"], out["width"], "9:16 is portrait")
			} else {
				assert.Greater(t, out["width"], out["height"], "aspectRatio default 16:9")
			}
			if tc.args["resolution"] == nil {
				assert.InDelta(t, 720, out["height"], 0, "resolution default 720p")
			}
			sniff(t, c, out["video"].(string), "video/mp4")
			if tc.feat == string(mediagen.FeatureVideoObjectReveal) { // posters are full-frame PNGs: fetch the smallest only
				sniff(t, c, out["poster"].(string), "image/png")
			}
		}
	})

	t.Run("aspectRatio: youtube-thumbnail default 16:9, others 1:1 unless given (DESIGN)", func(t *testing.T) {
		c := c.at(t)
		for _, tc := range []struct {
			feat string
			args map[string]any
			w, h int
		}{
			{"image/youtube-thumbnail", map[string]any{"prompt": "p"}, 16, 9},
			{"image/generation", map[string]any{"prompt": "p"}, 1, 1},
			{"image/generation", map[string]any{"prompt": "p", "aspectRatio": "3:4"}, 3, 4},
			{"image/generation", map[string]any{"prompt": "p", "image": c.image(cfKey), "aspectRatio": "9:16"}, 9, 16},
		} {
			id := c.gen(cfKey, tc.feat, tc.args)["id"].(string)
			c.finish()
			r := c.fetch(c.mustGetGen(cfKey, id)["output"].(map[string]any)["image"].(string))
			require.Equal(t, http.StatusOK, r.status)
			cfg, err := png.DecodeConfig(bytes.NewReader(r.body))
			require.NoError(t, err)
			assert.InDelta(t, float64(tc.w)/float64(tc.h), float64(cfg.Width)/float64(cfg.Height), 0.02, "%s %v", tc.feat, tc.args["aspectRatio"])
		}
	})

	t.Run("audio output: audio URL and mime", func(t *testing.T) {
		c := c.at(t)
		id := c.gen(cfKey, "audio/voiceover", map[string]any{"voiceId": cfCatalogID, "script": "Hello and welcome."})["id"].(string)
		c.finish()
		g := c.mustGetGen(cfKey, id)
		require.Equal(t, "done", g["status"])
		assert.Equal(t, "audio", g["kind"])
		out := g["output"].(map[string]any)
		assert.Equal(t, []string{"audio", "mime"}, keys(out))
		sniff(t, c, out["audio"].(string), out["mime"].(string))
	})

	t.Run("running -> error: Charge refunded; error description", func(t *testing.T) {
		c := c.at(t)
		for _, tc := range []struct{ feat, status string }{{"image/ad", "error"}, {"image/product-shot", "timeout"}} {
			before := c.balance(cfBill)
			g := c.gen(cfBill, tc.feat, map[string]any{"image": img, "prompt": "p"})
			charged := g["balanceUsed"].(float64)
			require.Greater(t, charged, 0.0)
			assert.InDelta(t, before-charged, c.balance(cfBill), 1e-9, "charged when accepted")
			c.finish()
			got := c.mustGetGen(cfBill, g["id"].(string))
			assert.Equal(t, tc.status, got["status"], tc.feat)
			assert.NotEmpty(t, got["error"], "error: Failure description")
			assert.Contains(t, got, "responseDate")
			assert.NotContains(t, got, "output")
			assert.InDelta(t, before, c.balance(cfBill), 1e-9, "the charge is refunded when the generation ends in %s", tc.status)
		}
	})

	t.Run("DELETE: { success: true }; Assets removed; no refund; 404 after", func(t *testing.T) {
		c := c.at(t)
		before := c.balance(cfBill)
		g := c.gen(cfBill, "image/generation", map[string]any{"prompt": "p"})
		id := g["id"].(string)
		c.finish()
		u := c.mustGetGen(cfBill, id)["output"].(map[string]any)["image"].(string)
		require.Equal(t, http.StatusOK, c.fetch(u).status)

		r := c.call(http.MethodDelete, "/v3/generations/"+id, cfBill, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r)
		assert.Equal(t, map[string]any{"success": true}, r.obj(t))
		wantError(t, c.getGen(cfBill, id), http.StatusNotFound, "not_found")
		wantError(t, c.call(http.MethodDelete, "/v3/generations/"+id, cfBill, nil), http.StatusNotFound, "not_found")
		ids, _, _ := c.list(cfBill, "")
		assert.NotContains(t, ids, id)
		assert.Equal(t, http.StatusNotFound, c.fetch(u).status, "assets removed")
		assert.InDelta(t, before-g["balanceUsed"].(float64), c.balance(cfBill), 1e-9, "no refund")

		inflight := c.gen(cfBill, "image/generation", map[string]any{"prompt": "p"})
		r = c.call(http.MethodDelete, "/v3/generations/"+inflight["id"].(string), cfBill, nil)
		assert.Equal(t, http.StatusOK, r.status, "any state can be deleted: %s", r)
		c.finish()
		wantError(t, c.getGen(cfBill, inflight["id"].(string)), http.StatusNotFound, "not_found")
	})

	t.Run("GET and DELETE 404 generation not found", func(t *testing.T) {
		c := c.at(t)
		wantError(t, c.getGen(cfKey, "gen_000000000000abcdef"), http.StatusNotFound, "not_found")
		wantError(t, c.call(http.MethodDelete, "/v3/generations/nope", cfKey, nil), http.StatusNotFound, "not_found")
	})
}

func TestConformanceExpiry(t *testing.T) {
	t.Parallel()
	c := newCF(t)
	g := c.gen(cfKey, "image/generation", map[string]any{"prompt": "p"})
	id := g["id"].(string)
	c.finish()
	u := c.mustGetGen(cfKey, id)["output"].(map[string]any)["image"].(string)

	c.advance(24*time.Hour - 5*time.Minute - time.Second)
	t.Run("before expiresAt the generation and its asset are served", func(t *testing.T) {
		c := c.at(t)
		assert.Equal(t, http.StatusOK, c.getGen(cfKey, id).status)
		ids, _, _ := c.list(cfKey, "")
		assert.Contains(t, ids, id)
		assert.Equal(t, http.StatusOK, c.fetch(u).status)
	})
	c.advance(time.Second)
	t.Run("expiresAt passes: GET answers 404; dropped from the list", func(t *testing.T) {
		c := c.at(t)
		wantError(t, c.getGen(cfKey, id), http.StatusNotFound, "not_found")
		ids, _, _ := c.list(cfKey, "")
		assert.NotContains(t, ids, id)
		wantError(t, c.call(http.MethodDelete, "/v3/generations/"+id, cfKey, nil), http.StatusNotFound, "not_found")
	})
	t.Run("Generations ... and their assets are deleted 24 hours after the request", func(t *testing.T) {
		c := c.at(t)
		assert.NotEqual(t, http.StatusOK, c.fetch(u).status)
	})
}

func TestConformanceListGenerations(t *testing.T) {
	t.Parallel()
	c := newCF(t)
	var created []string // oldest first
	for i := range 30 {
		feat := "image/generation"
		if i%3 == 0 {
			feat = "image-generation"
		}
		if i%5 == 0 {
			feat = "youtube-thumbnail"
		}
		created = append(created, c.gen(cfKey, feat, map[string]any{"prompt": fmt.Sprint("p", i)})["id"].(string))
		c.clock.Advance(time.Second)
	}
	newestFirst := slices.Clone(created)
	slices.Reverse(newestFirst)

	t.Run("default 24; newest first; nextCursor null on the last page", func(t *testing.T) {
		c := c.at(t)
		page1, next, _ := c.list(cfKey, "")
		assert.Equal(t, newestFirst[:24], page1)
		cur, ok := next.(string)
		require.True(t, ok, "nextCursor is a string on a page before the last: %v", next)
		// A new generation between pages does not shift keyset pages.
		c.gen(cfKey, "image/generation", map[string]any{"prompt": "late"})
		page2, next2, raw := c.list(cfKey, "cursor="+url.QueryEscape(cur))
		assert.Equal(t, newestFirst[24:], page2)
		assert.Contains(t, raw, "nextCursor", "nextCursor is present as a key")
		assert.Nil(t, next2)
	})

	t.Run("keyset pagination walks every row once", func(t *testing.T) {
		c := c.at(t)
		var all []string
		cur := ""
		for range 100 {
			ids, next, _ := c.list(cfKey, "limit=7&cursor="+url.QueryEscape(cur))
			all = append(all, ids...)
			if next == nil {
				break
			}
			cur = next.(string)
		}
		assert.Len(t, all, 31)
		assert.Equal(t, newestFirst, all[1:])
	})

	t.Run("feature: legacy spelling matches the same rows", func(t *testing.T) {
		c := c.at(t)
		canon, _, _ := c.list(cfKey, "feature=image/generation&limit=100")
		legacy, _, _ := c.list(cfKey, "feature=image-generation&limit=100")
		assert.NotEmpty(t, canon)
		assert.Equal(t, canon, legacy)
		thumbs, _, _ := c.list(cfKey, "feature=youtube-thumbnail")
		thumbs2, _, _ := c.list(cfKey, "feature=image/youtube-thumbnail")
		assert.Len(t, thumbs, 6)
		assert.Equal(t, thumbs, thumbs2)
		assert.Len(t, canon, 25)
	})

	t.Run("values above 100 are clamped to 100 (not rejected)", func(t *testing.T) {
		c := c.at(t)
		for range 75 {
			c.gen(cfKey, "image/generation", map[string]any{"prompt": "bulk"})
		}
		// However large the integer: one past int64 is still above 100.
		for _, q := range []string{"limit=101", "limit=1000", "limit=9223372036854775808", "limit=100000000000000000000000"} {
			ids, next, _ := c.list(cfKey, q)
			assert.Len(t, ids, 100, q)
			assert.NotNil(t, next, q)
		}
		small, _, _ := c.list(cfKey, "limit=-100000000000000000000000")
		assert.Len(t, small, 24, "values below 1 use the default (the contract's choice), however small")
		ids, next, _ := c.list(cfKey, "limit=100")
		assert.Len(t, ids, 100)
		assert.NotNil(t, next)
		rest, last, _ := c.list(cfKey, "limit=100&cursor="+url.QueryEscape(next.(string)))
		assert.Len(t, rest, 6)
		assert.Nil(t, last)
	})
}

// ---------- files ----------

func TestConformanceMultipartUpload(t *testing.T) {
	t.Parallel()
	c := newCF(t)
	t.Run("200: { files: [ { id, originalName, size } ] } in submission order", func(t *testing.T) {
		c := c.at(t)
		pngB, wavB, txt, js := cfPNG(t), cfWAV(2*time.Second), []byte("hello\n"), []byte(`{"a":1}`)
		r := c.upload(cfKey,
			cfPart{"b.png", "image/png", pngB}, cfPart{"a.wav", "audio/wav", wavB},
			cfPart{"c.txt", "text/plain", txt}, cfPart{"d.json", "application/json", js})
		require.Equal(t, http.StatusOK, r.status, "%s", r)
		m := r.obj(t)
		assert.Equal(t, []string{"files"}, keys(m))
		files := m["files"].([]any)
		require.Len(t, files, 4)
		for i, want := range []struct {
			name string
			size int
		}{{"b.png", len(pngB)}, {"a.wav", len(wavB)}, {"c.txt", len(txt)}, {"d.json", len(js)}} {
			f := files[i].(map[string]any)
			assert.Equal(t, []string{"id", "originalName", "size"}, keys(f))
			assert.Equal(t, want.name, f["originalName"])
			assert.InDelta(t, want.size, f["size"], 0)
			assert.NotEmpty(t, f["id"])
		}
	})
	t.Run("up to 10 files per request; over answers 400", func(t *testing.T) {
		c := c.at(t)
		var parts []cfPart
		for i := range 11 {
			parts = append(parts, cfPart{fmt.Sprintf("f%d.txt", i), "text/plain", []byte("x")})
		}
		r := c.upload(cfKey, parts[:10]...)
		require.Equal(t, http.StatusOK, r.status, "%s", r)
		assert.Len(t, r.obj(t)["files"], 10)
		wantError(t, c.upload(cfKey, parts...), http.StatusBadRequest, "invalid_argument")
	})
	t.Run("30 MB each (31,457,280 bytes accepted, one more answers 400)", func(t *testing.T) {
		c := c.at(t)
		big := make([]byte, cfMaxFile+1)
		copy(big, "%PDF-1.4\n")
		r := c.upload(cfKey, cfPart{"big.pdf", "application/pdf", big[:cfMaxFile]})
		require.Equal(t, http.StatusOK, r.status, "%s", r)
		assert.InDelta(t, cfMaxFile, r.obj(t)["files"].([]any)[0].(map[string]any)["size"], 0)
		wantError(t, c.upload(cfKey, cfPart{"big.pdf", "application/pdf", big}), http.StatusBadRequest, "invalid_argument")
	})
	t.Run("Field files (file, required): none answers 400", func(t *testing.T) {
		c := c.at(t)
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		require.NoError(t, mw.WriteField("note", "no file here"))
		require.NoError(t, mw.Close())
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, c.url+"/v3/files/upload", &body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", cfKey)
		wantError(t, c.send(req), http.StatusBadRequest, "invalid_argument")
		wantError(t, c.call(http.MethodPost, "/v3/files/upload", cfKey, `{"files":[]}`), http.StatusBadRequest, "invalid_argument")
	})
	t.Run("a multipart upload is live on return", func(t *testing.T) {
		c := c.at(t)
		id := c.image(cfKey)
		c.gen(cfKey, "image/ad", map[string]any{"image": id, "prompt": "p"})
	})
	t.Run("Every file is deleted 24 hours after it lands", func(t *testing.T) {
		c := c.at(t)
		id := c.image(cfKey)
		c.advance(24*time.Hour - time.Second)
		c.gen(cfKey, "image/ad", map[string]any{"image": id, "prompt": "p"})
		c.advance(time.Second)
		wantError(t, c.create(cfKey, "image/ad", map[string]any{"image": id, "prompt": "p"}, ""), http.StatusBadRequest, "invalid_argument")
	})
}

func TestConformanceSignedUpload(t *testing.T) {
	t.Parallel()
	c := newCF(t)
	reserve := func(t *testing.T, size int, ct string) (string, string, map[string]any) {
		t.Helper()
		r := c.call(http.MethodPost, "/v3/files/upload-url", cfKey, map[string]any{"bytes": size, "contentType": ct})
		require.Equal(t, http.StatusOK, r.status, "%s", r)
		m := r.obj(t)
		return m["file"].(map[string]any)["id"].(string), m["uploadUrl"].(string), m
	}
	put := func(t *testing.T, u string, body []byte, hdr map[string]string, chunked bool) cfResp {
		t.Helper()
		var rd io.Reader = bytes.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd) // unknown length: no Content-Length
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, u, rd)
		require.NoError(t, err)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		return c.send(req)
	}
	pngB := cfPNG(t)
	ct := map[string]string{"Content-Type": "image/png"}

	t.Run("200: { file: { id }, uploadUrl, method PUT, headers, expiresIn }", func(t *testing.T) {
		_, _, m := reserve(t, len(pngB), "image/png")
		assert.Equal(t, []string{"expiresIn", "file", "headers", "method", "uploadUrl"}, keys(m))
		assert.Equal(t, []string{"id"}, keys(m["file"].(map[string]any)))
		assert.Equal(t, "PUT", m["method"])
		assert.Equal(t, map[string]any{"Content-Type": "image/png", "Content-Length": strconv.Itoa(len(pngB))}, m["headers"])
		assert.InDelta(t, 900, m["expiresIn"], 0, "15 minutes in seconds")
		u, err := url.Parse(m["uploadUrl"].(string))
		require.NoError(t, err)
		assert.True(t, u.IsAbs())
	})

	t.Run("400 missing or malformed bytes or contentType", func(t *testing.T) {
		c := c.at(t)
		for _, body := range []string{
			`{"contentType":"image/png"}`,
			`{"bytes":100}`,
			`{"bytes":"100","contentType":"image/png"}`,
			`{"bytes":1.5,"contentType":"image/png"}`,
			`{"bytes":-1,"contentType":"image/png"}`,
			`{"bytes":0,"contentType":"image/png"}`,
			`{"bytes":100,"contentType":""}`,
			`{"bytes":100,"contentType":"png"}`,
			`{"bytes":100,"contentType":7}`,
			`not json`,
		} {
			r := c.call(http.MethodPost, "/v3/files/upload-url", cfKey, body)
			require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", body, r)
			assert.Equal(t, "invalid_argument", errCode(t, r))
		}
	})
	t.Run("413 over 30 MB; 31,457,280 bytes accepted", func(t *testing.T) {
		c := c.at(t)
		r := c.call(http.MethodPost, "/v3/files/upload-url", cfKey, map[string]any{"bytes": cfMaxFile + 1, "contentType": "video/mp4"})
		wantError(t, r, http.StatusRequestEntityTooLarge, "payload_too_large")
		id, u, _ := reserve(t, cfMaxFile, "application/pdf")
		big := make([]byte, cfMaxFile)
		copy(big, "%PDF-1.4\n")
		ok := put(t, u, big, map[string]string{"Content-Type": "application/pdf"}, false)
		require.Equal(t, http.StatusOK, ok.status, "%s", ok)
		assert.NotEmpty(t, id)
	})
	t.Run("413 over 30 MB, however large the integer", func(t *testing.T) {
		c := c.at(t)
		for _, body := range []string{`{"bytes":104857600,"contentType":"video/mp4"}`, `{"bytes":100000000000000000000,"contentType":"video/mp4"}`} {
			wantError(t, c.call(http.MethodPost, "/v3/files/upload-url", cfKey, body), http.StatusRequestEntityTooLarge, "payload_too_large")
		}
	})
	t.Run("expiresIn seconds hold even when reserved mid-second", func(t *testing.T) {
		mid := newCF(t)
		mid.clock.Advance(700 * time.Millisecond)
		c := mid.at(t)
		r := c.call(http.MethodPost, "/v3/files/upload-url", cfKey, map[string]any{"bytes": len(pngB), "contentType": "image/png"})
		require.Equal(t, http.StatusOK, r.status)
		m := r.obj(t)
		c.advance(time.Duration(m["expiresIn"].(float64))*time.Second - 100*time.Millisecond)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, m["uploadUrl"].(string), bytes.NewReader(pngB))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "image/png")
		assert.Equal(t, http.StatusOK, c.send(req).status)
	})
	t.Run("415 type not accepted", func(t *testing.T) {
		c := c.at(t)
		for _, typ := range []string{"application/x-msdownload", "image/x-photoshop", "font/woff2"} {
			r := c.call(http.MethodPost, "/v3/files/upload-url", cfKey, map[string]any{"bytes": 100, "contentType": typ})
			wantError(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
		}
	})
	t.Run("accepted: images, audio, video, documents (PDF, ZIP, text, JSON)", func(t *testing.T) {
		c := c.at(t)
		for _, typ := range []string{"image/png", "image/jpeg", "audio/mpeg", "audio/wav", "video/mp4", "video/webm", "application/pdf", "application/zip", "text/plain", "application/json"} {
			r := c.call(http.MethodPost, "/v3/files/upload-url", cfKey, map[string]any{"bytes": 100, "contentType": typ})
			assert.Equal(t, http.StatusOK, r.status, "%s: %s", typ, r)
		}
	})

	t.Run("a PUT that changes or omits either header is refused by storage with 403", func(t *testing.T) {
		_, u, _ := reserve(t, len(pngB), "image/png")
		cases := []struct {
			name    string
			body    []byte
			hdr     map[string]string
			chunked bool
		}{
			{"Content-Type changed", pngB, map[string]string{"Content-Type": "image/jpeg"}, false},
			{"Content-Type with a parameter", pngB, map[string]string{"Content-Type": "image/png; q=1"}, false},
			{"Content-Type omitted", pngB, nil, false},
			{"Content-Length changed", pngB[:len(pngB)-1], ct, false},
			{"Content-Length omitted", pngB, ct, true},
		}
		for _, tc := range cases {
			r := put(t, u, tc.body, tc.hdr, tc.chunked)
			assert.Equal(t, http.StatusForbidden, r.status, "%s: %s", tc.name, r)
		}
	})

	t.Run("200 with empty body means the id is live; it behaves like a multipart id", func(t *testing.T) {
		c := c.at(t)
		id, u, _ := reserve(t, len(pngB), "image/png")
		r := c.create(cfKey, "image/ad", map[string]any{"image": id, "prompt": "p"}, "")
		wantError(t, r, http.StatusBadRequest, "invalid_argument") // reserved, not uploaded
		ok := put(t, u, pngB, ct, false)
		require.Equal(t, http.StatusOK, ok.status, "%s", ok)
		assert.Empty(t, ok.body)
		c.gen(cfKey, "image/ad", map[string]any{"image": id, "prompt": "p"})
	})

	t.Run("the signed upload URL carries its own credential for 15 minutes", func(t *testing.T) {
		c := c.at(t)
		_, u1, _ := reserve(t, len(pngB), "image/png")
		_, u2, _ := reserve(t, len(pngB), "image/png")
		c.advance(15*time.Minute - time.Second)
		assert.Equal(t, http.StatusOK, put(t, u1, pngB, ct, false).status, "valid before 15 minutes")
		c.advance(2 * time.Second)
		assert.Equal(t, http.StatusForbidden, put(t, u2, pngB, ct, false).status, "refused after 15 minutes")
	})

	t.Run("a signed file is deleted 24 hours after it lands", func(t *testing.T) {
		c := c.at(t)
		id, u, _ := reserve(t, len(pngB), "image/png")
		c.advance(10 * time.Minute)
		require.Equal(t, http.StatusOK, put(t, u, pngB, ct, false).status)
		c.advance(24*time.Hour - time.Second)
		c.gen(cfKey, "image/ad", map[string]any{"image": id, "prompt": "p"})
		c.advance(time.Second)
		wantError(t, c.create(cfKey, "image/ad", map[string]any{"image": id, "prompt": "p"}, ""), http.StatusBadRequest, "invalid_argument")
	})

	t.Run("a file that fails validation (text bytes PUT as image/png) answers 400 at generation time", func(t *testing.T) {
		c := c.at(t)
		body := []byte("definitely not a png")
		id, u, _ := reserve(t, len(body), "image/png")
		require.Equal(t, http.StatusOK, put(t, u, body, ct, false).status)
		wantError(t, c.create(cfKey, "image/ad", map[string]any{"image": id, "prompt": "p"}, ""), http.StatusBadRequest, "invalid_argument")
	})
}

// ---------- pricing ----------

func TestConformancePricing(t *testing.T) {
	t.Parallel()
	c := newCF(t)
	r := c.call(http.MethodGet, "/v3/pricing", cfKey, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r)
	m := r.obj(t)
	t.Run("200: { prices: { <feature>: Pricing entry } }", func(t *testing.T) {
		assert.Equal(t, []string{"prices"}, keys(m))
	})
	prices := m["prices"].(map[string]any)
	t.Run("one entry per priced feature, and a key audio/voice-clone", func(t *testing.T) {
		for _, f := range []string{"image/self-portrait", "image/generation", "image/product-shot", "image/youtube-thumbnail",
			"image/ad", "video/logo-reveal", string(mediagen.FeatureVideoObjectReveal), "video/avatar", "audio/voiceover", "audio/voice-clone"} {
			e, ok := prices[f].(map[string]any)
			require.True(t, ok, "%s priced", f)
			assert.Greater(t, e["price"], 0.0, f)
			assert.Contains(t, []any{"call", "second", "15s", "1000chars"}, e["unit"], f)
		}
	})
	t.Run("price unit: per call, per second for reveals, per started 15 seconds for avatar, per started 1,000 characters for voiceover", func(t *testing.T) {
		assert.Equal(t, "call", prices["image/generation"].(map[string]any)["unit"])
		assert.Equal(t, "second", prices["video/logo-reveal"].(map[string]any)["unit"])
		assert.Equal(t, "second", prices[string(mediagen.FeatureVideoObjectReveal)].(map[string]any)["unit"])
		assert.Equal(t, "15s", prices["video/avatar"].(map[string]any)["unit"])
		assert.Equal(t, "1000chars", prices["audio/voiceover"].(map[string]any)["unit"])
	})
	t.Run("variants: Present only when an argument changes the price; fineDetails off/on, resolution 720p/1080p", func(t *testing.T) {
		for f, e := range prices {
			v, ok := e.(map[string]any)["variants"]
			if !ok {
				continue
			}
			for arg, vals := range v.(map[string]any) {
				distinct := map[float64]bool{}
				for _, mul := range vals.(map[string]any) {
					distinct[mul.(float64)] = true
				}
				assert.Greater(t, len(distinct), 1, "%s variant %s changes the price", f, arg)
			}
		}
		fd := prices["image/generation"].(map[string]any)["variants"].(map[string]any)["fineDetails"].(map[string]any)
		assert.Equal(t, []string{"off", "on"}, keys(fd))
		res := prices["video/logo-reveal"].(map[string]any)["variants"].(map[string]any)["resolution"].(map[string]any)
		assert.Equal(t, []string{"1080p", "720p"}, keys(res))
		assert.NotContains(t, prices["image/self-portrait"], "variants")
		assert.NotContains(t, prices["audio/voice-clone"], "variants")
	})
	t.Run("Cost of a call = price x the multiplier of each option x units", func(t *testing.T) {
		c := c.at(t)
		img := c.image(cfKey)
		p := func(f string) float64 { return prices[f].(map[string]any)["price"].(float64) }
		for _, tc := range []struct {
			feat string
			args map[string]any
			want float64
		}{
			{"image/generation", map[string]any{"prompt": "p"}, p("image/generation") * c.multiplier("image/generation", "fineDetails", "off")},
			{"image/generation", map[string]any{"prompt": "p", "fineDetails": true}, p("image/generation") * c.multiplier("image/generation", "fineDetails", "on")},
			{"video/logo-reveal", map[string]any{"image": img, "prompt": "p", "duration": 6, "resolution": "1080p"}, 6 * p("video/logo-reveal") * c.multiplier("video/logo-reveal", "resolution", "1080p")},
			{"video/logo-reveal", map[string]any{"image": img, "prompt": "p"}, 5 * p("video/logo-reveal")},
			{string(mediagen.FeatureVideoObjectReveal), map[string]any{"image": img, "prompt": "p", "duration": 10}, 10 * p(string(mediagen.FeatureVideoObjectReveal))},
			{"video/avatar", map[string]any{"voiceId": cfVoiceSlug, "script": strings.Repeat("a", 225), "permissionConfirmed": true}, p("video/avatar")},
			{"video/avatar", map[string]any{"voiceId": cfVoiceSlug, "script": strings.Repeat("a", 226), "permissionConfirmed": true}, 2 * p("video/avatar")},
			{"audio/voiceover", map[string]any{"voiceId": cfVoiceSlug, "script": strings.Repeat("a", 1000)}, p("audio/voiceover")},
			{"audio/voiceover", map[string]any{"voiceId": cfVoiceSlug, "script": strings.Repeat("a", 1001)}, 2 * p("audio/voiceover")},
			{"image/self-portrait", map[string]any{"image": img, "prompt": "p", "permissionConfirmed": true}, p("image/self-portrait")},
		} {
			g := c.gen(cfKey, tc.feat, tc.args)
			assert.InDelta(t, tc.want, g["balanceUsed"], 1e-6, "%s %v", tc.feat, tc.args["script"] != nil)
		}
	})
	t.Run("Nothing is held or quoted", func(t *testing.T) {
		c := c.at(t)
		before := c.balance(cfBill)
		for range 3 {
			c.call(http.MethodGet, "/v3/pricing", cfBill, nil)
		}
		assert.InDelta(t, before, c.balance(cfBill), 1e-9)
	})
}

// ---------- voices ----------

func TestConformanceVoiceClones(t *testing.T) {
	t.Parallel()
	var clones atomic.Int32
	c := newCF(t, refserver.WithOutcome(func(f string) refserver.Outcome {
		if f == "audio/voice-clone" && clones.Add(1) == 2 {
			return refserver.OutcomeError // the second clone submitted fails
		}
		return refserver.OutcomeDone
	}))
	sample := c.sample(cfBill, 12*time.Second)
	clonePrice := c.price("audio/voice-clone")

	var first string
	t.Run("200: { voice } with status running; Charged on submit", func(t *testing.T) {
		c := c.at(t)
		before := c.balance(cfBill)
		r := c.clone(cfBill, map[string]any{"name": "My voice", "audio": sample, "description": "calm"})
		require.Equal(t, http.StatusOK, r.status, "%s", r)
		m := r.obj(t)
		assert.Equal(t, []string{"voice"}, keys(m))
		v := m["voice"].(map[string]any)
		assert.Equal(t, "running", v["status"])
		assert.Equal(t, "project", v["owner"])
		assert.Equal(t, "My voice", v["name"])
		assert.Equal(t, "calm", v["description"])
		assert.Contains(t, v, "requestDate")
		for _, k := range []string{"slug", "tags", "locale", "favorite", "preview"} {
			assert.NotContains(t, v, k, "%s is for catalog voices only", k)
		}
		first = v["id"].(string)
		assert.InDelta(t, before-clonePrice, c.balance(cfBill), 1e-9)
	})
	t.Run("running -> error: Refunded", func(t *testing.T) {
		c := c.at(t)
		before := c.balance(cfBill)
		r := c.clone(cfBill, map[string]any{"name": "Doomed", "audio": sample})
		require.Equal(t, http.StatusOK, r.status, "%s", r)
		id := r.obj(t)["voice"].(map[string]any)["id"].(string)
		assert.InDelta(t, before-clonePrice, c.balance(cfBill), 1e-9)
		c.finish()
		g := c.call(http.MethodGet, "/v3/voices/"+id, cfBill, nil)
		require.Equal(t, http.StatusOK, g.status)
		v := g.obj(t)["voice"].(map[string]any)
		assert.Equal(t, "error", v["status"])
		assert.NotEmpty(t, v["error"])
		assert.InDelta(t, before, c.balance(cfBill), 1e-9)
	})
	t.Run("running -> done; a voice id is used as args.voiceId", func(t *testing.T) {
		c := c.at(t)
		g := c.call(http.MethodGet, "/v3/voices/"+first, cfBill, nil)
		require.Equal(t, http.StatusOK, g.status)
		v := g.obj(t)["voice"].(map[string]any)
		assert.Equal(t, "done", v["status"])
		assert.Contains(t, v, "responseDate")
		c.gen(cfBill, "audio/voiceover", map[string]any{"voiceId": first, "script": "hi"})
		c.gen(cfBill, "video/avatar", map[string]any{"voiceId": first, "script": "hi", "permissionConfirmed": true})
	})
	t.Run("400 missing name or audio, or sample too short (DESIGN: 10 s); nothing charged", func(t *testing.T) {
		c := c.at(t)
		before := c.balance(cfBill)
		short := c.sample(cfBill, 9*time.Second)
		tenS := c.sample(cfBill, 10*time.Second)
		img := c.image(cfBill)
		txt := c.textFile(cfBill)
		mp4 := c.fileIDs(cfBill, cfPart{"talk.mp4", "video/mp4", cfMP4("isom", 12*time.Second, "vide", "soun")})[0]
		for name, body := range map[string]map[string]any{
			"an MP4 video (not MP3, WAV, M4A, OGG, FLAC or WebM)": {"name": "x", "audio": mp4},
			"missing name":     {"audio": sample},
			"blank name":       {"name": "  ", "audio": sample},
			"missing audio":    {"name": "x"},
			"sample too short": {"name": "x", "audio": short},
			"an image":         {"name": "x", "audio": img},
			"a text file":      {"name": "x", "audio": txt},
			"unknown file":     {"name": "x", "audio": "file_nope"},
			"http webhookUrl":  {"name": "x", "audio": sample, "webhookUrl": "http://example.com/h"},
		} {
			r := c.clone(cfBill, body)
			require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", name, r)
			assert.Equal(t, "invalid_argument", errCode(t, r), name)
		}
		assert.InDelta(t, before, c.balance(cfBill), 1e-9)
		r := c.clone(cfBill, map[string]any{"name": "ten", "audio": tenS})
		assert.Equal(t, http.StatusOK, r.status, "a 10 s sample is enough: %s", r)
		m4a := c.fileIDs(cfBill, cfPart{"talk.m4a", "audio/mp4", cfMP4("M4A ", 12*time.Second, "soun")})[0]
		r = c.clone(cfBill, map[string]any{"name": "m4a", "audio": m4a})
		assert.Equal(t, http.StatusOK, r.status, "an M4A sample: %s", r)
	})
	t.Run("402 when a voice clone costs more than the balance", func(t *testing.T) {
		c := c.at(t)
		poor := c.sample(cfPoor, 12*time.Second)
		r := c.clone(cfPoor, map[string]any{"name": "x", "audio": poor})
		require.Equal(t, http.StatusPaymentRequired, r.status, "%s", r)
		e := r.obj(t)["error"].(map[string]any)
		assert.Equal(t, "insufficient_balance", e["code"])
		assert.InDelta(t, clonePrice, e["required"], 1e-9)
		assert.InDelta(t, 0.01, e["balance"], 1e-9)
	})
	t.Run("DELETE: the id stops resolving everywhere; no undelete", func(t *testing.T) {
		c := c.at(t)
		r := c.call(http.MethodDelete, "/v3/voices/"+first, cfBill, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r)
		assert.Equal(t, map[string]any{"success": true}, r.obj(t))
		wantError(t, c.call(http.MethodGet, "/v3/voices/"+first, cfBill, nil), http.StatusNotFound, "not_found")
		wantError(t, c.call(http.MethodDelete, "/v3/voices/"+first, cfBill, nil), http.StatusNotFound, "not_found")
		wantError(t, c.create(cfBill, "audio/voiceover", map[string]any{"voiceId": first, "script": "hi"}, ""), http.StatusBadRequest, "invalid_argument")
		ids := voiceIDs(t, c, cfBill, "")
		assert.NotContains(t, ids, first)
	})
}

func TestConformanceVoiceDeleteAnyState(t *testing.T) {
	t.Parallel()
	c := newCF(t, refserver.WithOutcome(func(f string) refserver.Outcome {
		if f == "audio/voice-clone" {
			return refserver.OutcomeError
		}
		return refserver.OutcomeDone
	}))
	sample := c.sample(cfKey, 12*time.Second)
	id := func() string {
		r := c.clone(cfKey, map[string]any{"name": "x", "audio": sample})
		require.Equal(t, http.StatusOK, r.status, "%s", r)
		return r.obj(t)["voice"].(map[string]any)["id"].(string)
	}
	failed := id()
	c.finish()
	t.Run("done / running / error: DELETE removes the project's clone", func(t *testing.T) {
		c := c.at(t)
		assert.Equal(t, "error", c.call(http.MethodGet, "/v3/voices/"+failed, cfKey, nil).obj(t)["voice"].(map[string]any)["status"])
		del := c.call(http.MethodDelete, "/v3/voices/"+failed, cfKey, nil)
		assert.Equal(t, http.StatusOK, del.status, "an error clone can be deleted: %s", del)
		wantError(t, c.call(http.MethodGet, "/v3/voices/"+failed, cfKey, nil), http.StatusNotFound, "not_found")
		fresh := id()
		del = c.call(http.MethodDelete, "/v3/voices/"+fresh, cfKey, nil)
		assert.Equal(t, http.StatusOK, del.status, "a running clone can be deleted: %s", del)
		c.finish()
		wantError(t, c.call(http.MethodGet, "/v3/voices/"+fresh, cfKey, nil), http.StatusNotFound, "not_found")
		assert.NotContains(t, voiceIDs(t, c, cfKey, "owner=project"), fresh)
	})
}

func TestConformanceVoiceTrainingLimit(t *testing.T) {
	t.Parallel()
	c := newCF(t)
	a := c.sample(cfBill, 12*time.Second)
	b := c.sample(cfOther, 12*time.Second)
	for i := range 5 {
		key, s := cfBill, a
		if i%2 == 1 {
			key, s = cfOther, b
		}
		r := c.clone(key, map[string]any{"name": fmt.Sprint("v", i), "audio": s})
		require.Equal(t, http.StatusOK, r.status, "%s", r)
	}
	t.Run("429 too many voices training (with Retry-After header); 5 per organization", func(t *testing.T) {
		c := c.at(t)
		before := c.balance(cfBill)
		r := c.clone(cfBill, map[string]any{"name": "sixth", "audio": a})
		wantError(t, r, http.StatusTooManyRequests, "rate_limited")
		n, err := strconv.Atoi(r.header.Get("Retry-After"))
		require.NoError(t, err, "Retry-After is seconds: %q", r.header.Get("Retry-After"))
		assert.Positive(t, n)
		assert.InDelta(t, before, c.balance(cfBill), 1e-9, "nothing charged")
	})
	t.Run("once training finished a clone is accepted again", func(t *testing.T) {
		c := c.at(t)
		c.finish()
		r := c.clone(cfBill, map[string]any{"name": "sixth", "audio": a})
		assert.Equal(t, http.StatusOK, r.status, "%s", r)
	})
}

func voiceIDs(t *testing.T, c *cf, key, query string) []string {
	t.Helper()
	vs := voiceList(t, c, key, query)
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v["id"].(string)
	}
	return ids
}

func voiceList(t *testing.T, c *cf, key, query string) []map[string]any {
	t.Helper()
	r := c.call(http.MethodGet, "/v3/voices?"+query, key, nil)
	require.Equal(t, http.StatusOK, r.status, "%s: %s", query, r)
	m := r.obj(t)
	assert.Equal(t, []string{"voices"}, keys(m))
	var out []map[string]any
	for _, v := range m["voices"].([]any) {
		out = append(out, v.(map[string]any))
	}
	return out
}

func TestConformanceVoiceCatalog(t *testing.T) {
	t.Parallel()
	c := newCF(t)
	mine := c.clone(cfKey, map[string]any{"name": "Mine", "audio": c.sample(cfKey, 12*time.Second)})
	require.Equal(t, http.StatusOK, mine.status, "%s", mine)
	cloneID := mine.obj(t)["voice"].(map[string]any)["id"].(string)

	t.Run("200: { voices }; the project's clones first, then the catalog", func(t *testing.T) {
		c := c.at(t)
		vs := voiceList(t, c, cfKey, "")
		require.Greater(t, len(vs), 2)
		assert.Equal(t, cloneID, vs[0]["id"])
		assert.Equal(t, "project", vs[0]["owner"])
		for _, v := range vs[1:] {
			assert.Equal(t, "service", v["owner"])
		}
		t.Run("catalog voices carry slug, tags, locale, favorite, preview; no lifecycle", func(t *testing.T) {
			c := c.at(t)
			cats := map[string]bool{"narration": true, "conversational": true, "character": true, "creature": true}
			for _, v := range vs[1:] {
				for _, k := range []string{"id", "name", "slug", "tags", "locale", "favorite", "preview"} {
					assert.Contains(t, v, k, "%s carries %s", v["id"], k)
				}
				assert.NotContains(t, v, "status", "status is carried by clones")
				found := 0
				for _, tag := range v["tags"].([]any) {
					assert.Equal(t, strings.ToLower(tag.(string)), tag, "tags are lowercase")
					if cats[tag.(string)] {
						found++
					}
				}
				assert.Equal(t, 1, found, "%s has one category tag", v["id"])
				assert.NotEqual(t, cfRetiredID, v["id"], "retired voices are not listed")
			}
			r := c.fetch(vs[1]["preview"].(string))
			assert.Equal(t, http.StatusOK, r.status, "preview: presigned audition clip URL")
			assert.True(t, strings.HasPrefix(r.header.Get("Content-Type"), "audio/"), r.header.Get("Content-Type"))
		})
		t.Run("catalog voices are identical for every caller", func(t *testing.T) {
			c := c.at(t)
			other := voiceList(t, c, cfOther, "owner=service")
			assert.Equal(t, len(vs)-1, len(other))
			for i, v := range other {
				assert.Equal(t, vs[i+1]["id"], v["id"])
				assert.Equal(t, vs[i+1]["slug"], v["slug"])
			}
		})
	})
	t.Run("owner service or project; omit for both; any other value is 400", func(t *testing.T) {
		c := c.at(t)
		assert.Equal(t, []string{cloneID}, voiceIDs(t, c, cfKey, "owner=project"))
		svc := voiceList(t, c, cfKey, "owner=service")
		require.NotEmpty(t, svc)
		for _, v := range svc {
			assert.Equal(t, "service", v["owner"])
		}
		for _, q := range []string{"owner=all", "owner=Service", "owner=both"} {
			wantError(t, c.call(http.MethodGet, "/v3/voices?"+q, cfKey, nil), http.StatusBadRequest, "invalid_argument")
		}
	})
	t.Run("tag repeatable; voice must carry all; ignored on clones", func(t *testing.T) {
		c := c.at(t)
		vs := voiceList(t, c, cfKey, "tag=male&tag=british")
		require.NotEmpty(t, vs)
		assert.Equal(t, cloneID, vs[0]["id"], "tag is ignored on clones")
		require.Greater(t, len(vs), 1)
		for _, v := range vs[1:] {
			assert.Contains(t, v["tags"], "male")
			assert.Contains(t, v["tags"], "british")
		}
		one := voiceList(t, c, cfKey, "tag=male&owner=service")
		assert.Greater(t, len(one), len(vs)-1, "each tag narrows")
		assert.Empty(t, voiceList(t, c, cfKey, "tag=female&tag=male&owner=service"))
	})
	t.Run("locale exact match, not a prefix; ignored on clones", func(t *testing.T) {
		c := c.at(t)
		assert.Equal(t, []string{cloneID}, voiceIDs(t, c, cfKey, "locale=en"), "en is not a prefix match")
		vs := voiceList(t, c, cfKey, "locale=en-GB&owner=service")
		require.NotEmpty(t, vs)
		for _, v := range vs {
			assert.Equal(t, "en-GB", v["locale"])
		}
		assert.Empty(t, voiceList(t, c, cfKey, "locale=en-gb&owner=service"), "exact match")
	})
	t.Run("GET /v3/voices/{id}: a catalog voice uuid or slug, or a clone id", func(t *testing.T) {
		c := c.at(t)
		byID := c.call(http.MethodGet, "/v3/voices/"+cfCatalogID, cfKey, nil)
		bySlug := c.call(http.MethodGet, "/v3/voices/"+cfCatalogSlg, cfKey, nil)
		require.Equal(t, http.StatusOK, byID.status)
		require.Equal(t, http.StatusOK, bySlug.status)
		a, b := byID.obj(t), bySlug.obj(t)
		assert.Equal(t, []string{"voice"}, keys(a))
		va, vb := a["voice"].(map[string]any), b["voice"].(map[string]any)
		assert.Equal(t, cfCatalogID, va["id"])
		assert.Equal(t, cfCatalogSlg, va["slug"])
		delete(va, "preview")
		delete(vb, "preview")
		assert.Equal(t, va, vb)
		cl := c.call(http.MethodGet, "/v3/voices/"+cloneID, cfKey, nil)
		require.Equal(t, http.StatusOK, cl.status)
		assert.Equal(t, cloneID, cl.obj(t)["voice"].(map[string]any)["id"])
	})
	t.Run("404 (a retired catalog voice also answers 404)", func(t *testing.T) {
		c := c.at(t)
		for _, id := range []string{cfRetiredID, cfRetiredSlg, "no-such-voice"} {
			wantError(t, c.call(http.MethodGet, "/v3/voices/"+id, cfKey, nil), http.StatusNotFound, "not_found")
		}
	})
	t.Run("the slug is accepted anywhere the uuid is (args.voiceId)", func(t *testing.T) {
		c := c.at(t)
		c.gen(cfKey, "audio/voiceover", map[string]any{"voiceId": cfCatalogSlg, "script": "hi"})
		c.gen(cfKey, "audio/voiceover", map[string]any{"voiceId": cfCatalogID, "script": "hi"})
	})
	t.Run("DELETE 404 when the id is not one of the project's clones (catalog voices included)", func(t *testing.T) {
		c := c.at(t)
		for _, id := range []string{cfCatalogID, cfCatalogSlg, "nope"} {
			wantError(t, c.call(http.MethodDelete, "/v3/voices/"+id, cfKey, nil), http.StatusNotFound, "not_found")
		}
		wantError(t, c.call(http.MethodDelete, "/v3/voices/"+cloneID, cfOther, nil), http.StatusNotFound, "not_found")
		assert.Equal(t, http.StatusOK, c.call(http.MethodGet, "/v3/voices/"+cfCatalogID, cfKey, nil).status, "catalog voices cannot be deleted")
	})

	t.Run("favorite: PUT sets true, DELETE sets false; both idempotent; per project", func(t *testing.T) {
		c := c.at(t)
		for range 2 {
			r := c.call(http.MethodPut, "/v3/voices/"+cfCatalogSlg+"/favorite", cfKey, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r)
			assert.Equal(t, map[string]any{"id": cfCatalogID, "favorite": true}, r.obj(t))
		}
		r := c.call(http.MethodPut, "/v3/voices/"+cfVoiceSlug+"/favorite", cfKey, nil)
		require.Equal(t, http.StatusOK, r.status)
		favID := r.obj(t)["id"].(string)
		for _, q := range []string{"favorites=1", "favorites=true", "favorites=yes"} {
			ids := voiceIDs(t, c, cfKey, q)
			assert.ElementsMatch(t, []string{cfCatalogID, favID}, ids, q)
		}
		got := c.call(http.MethodGet, "/v3/voices/"+cfCatalogID, cfKey, nil).obj(t)["voice"].(map[string]any)
		assert.Equal(t, true, got["favorite"])
		other := c.call(http.MethodGet, "/v3/voices/"+cfCatalogID, cfOther, nil).obj(t)["voice"].(map[string]any)
		assert.Equal(t, false, other["favorite"], "starring is per project")
		assert.Empty(t, voiceIDs(t, c, cfOther, "favorites=1"))
		for range 2 {
			r := c.call(http.MethodDelete, "/v3/voices/"+cfCatalogID+"/favorite", cfKey, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r)
			assert.Equal(t, map[string]any{"id": cfCatalogID, "favorite": false}, r.obj(t))
		}
		assert.Equal(t, []string{favID}, voiceIDs(t, c, cfKey, "favorites=yes"))
		for _, id := range []string{cfRetiredID, "nope"} {
			wantError(t, c.call(http.MethodPut, "/v3/voices/"+id+"/favorite", cfKey, nil), http.StatusNotFound, "not_found")
			wantError(t, c.call(http.MethodDelete, "/v3/voices/"+id+"/favorite", cfKey, nil), http.StatusNotFound, "not_found")
		}
	})
}

func TestConformancePresignedURLs(t *testing.T) {
	t.Parallel()
	c := newCF(t)
	voice := c.call(http.MethodGet, "/v3/voices/"+cfCatalogID, cfKey, nil).obj(t)["voice"].(map[string]any)["preview"].(string)
	tp := templates(t, c, "feature=video/logo-reveal&limit=1")[0].Previews[0]
	g := c.gen(cfKey, "image/generation", map[string]any{"prompt": "p"})
	c.finish()
	out := c.mustGetGen(cfKey, g["id"].(string))["output"].(map[string]any)["image"].(string)
	urls := []string{voice, tp.Image, *tp.Video, out}
	t.Run("signed URLs work without Authorization", func(t *testing.T) {
		c := c.at(t)
		for _, u := range urls {
			assert.Equal(t, http.StatusOK, c.fetch(u).status, u)
		}
	})
	t.Run("a changed signature is refused", func(t *testing.T) {
		c := c.at(t)
		for _, u := range urls {
			p, err := url.Parse(u)
			require.NoError(t, err)
			q := p.Query()
			sig := []byte(q.Get("signature"))
			sig[0] ^= 1
			q.Set("signature", string(sig))
			p.RawQuery = q.Encode()
			assert.Equal(t, http.StatusForbidden, c.fetch(p.String()).status, u)
		}
	})
	t.Run("presigned preview URLs: about 6 hours", func(t *testing.T) {
		c := c.at(t)
		c.advance(5 * time.Hour)
		for _, u := range urls[:3] {
			assert.Equal(t, http.StatusOK, c.fetch(u).status, "still valid after 5 hours: %s", u)
		}
		c.advance(2 * time.Hour)
		for _, u := range urls[:3] {
			assert.Equal(t, http.StatusForbidden, c.fetch(u).status, "expired after 7 hours: %s", u)
		}
		assert.Equal(t, http.StatusOK, c.fetch(out).status, "an output lives until expiresAt")
	})
}

// ---------- templates ----------

type cfTemplate struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Category string `json:"category"`
	Feature  string `json:"feature"`
	Previews []struct {
		ID     string  `json:"id"`
		Gender string  `json:"gender"`
		Image  string  `json:"image"`
		Video  *string `json:"video"`
	} `json:"previews"`
}

func templates(t *testing.T, c *cf, query string) []cfTemplate {
	t.Helper()
	r := c.call(http.MethodGet, "/v3/templates?"+query, cfKey, nil)
	require.Equal(t, http.StatusOK, r.status, "%s: %s", query, r)
	assert.Equal(t, []string{"templates"}, keys(r.obj(t)))
	var out struct{ Templates []cfTemplate }
	require.NoError(t, json.Unmarshal(r.body, &out))
	return out.Templates
}

func TestConformanceTemplates(t *testing.T) {
	t.Parallel()
	c := newCF(t)
	portraits := templates(t, c, "")
	t.Run("feature default image/self-portrait; canonical and legacy spellings accepted", func(t *testing.T) {
		c := c.at(t)
		require.NotEmpty(t, portraits)
		for _, tp := range portraits {
			assert.Equal(t, "image/self-portrait", tp.Feature)
		}
		assert.Equal(t, portraits, templates(t, c, "feature=image/self-portrait"))
		assert.Equal(t, portraits, templates(t, c, "feature=self-portrait"))
		logo := templates(t, c, "feature=video/logo-reveal")
		assert.Equal(t, logo, templates(t, c, "feature=logo-reveal"))
		for _, tp := range logo {
			assert.Equal(t, "video/logo-reveal", tp.Feature, "feature: Canonical feature key")
		}
	})
	t.Run("video/logo-reveal has categories motion and outro", func(t *testing.T) {
		c := c.at(t)
		cats := map[string]bool{}
		for _, tp := range templates(t, c, "feature=logo-reveal") {
			cats[tp.Category] = true
		}
		assert.Equal(t, map[string]bool{"motion": true, "outro": true}, cats)
	})
	t.Run("previews: gender (any for non-person features), image URL, video only for video features", func(t *testing.T) {
		c := c.at(t)
		for _, f := range []string{"image/self-portrait", "image/generation", "image/product-shot", "image/youtube-thumbnail",
			"image/ad", "video/logo-reveal", string(mediagen.FeatureVideoObjectReveal), "video/avatar", "audio/voiceover"} {
			list := templates(t, c, "feature="+f)
			assert.NotEmpty(t, list, "ready-made styles per feature: %s", f)
			person := f == "image/self-portrait" || f == "video/avatar"
			for _, tp := range list {
				assert.Equal(t, f, tp.Feature)
				require.NotEmpty(t, tp.Previews, tp.ID)
				for _, pv := range tp.Previews {
					assert.NotEmpty(t, pv.ID)
					if person {
						assert.Contains(t, []string{"female", "male"}, pv.Gender, pv.ID)
					} else {
						assert.Equal(t, "any", pv.Gender, pv.ID)
					}
					assert.NotEmpty(t, pv.Image, pv.ID)
					assert.Equal(t, strings.HasPrefix(f, "video/"), pv.Video != nil, "%s video only for video features", pv.ID)
				}
			}
		}
		logo := templates(t, c, "feature=video/logo-reveal&limit=1")
		require.Len(t, logo, 1)
		sniff(t, c, logo[0].Previews[0].Image, "image/png")
		sniff(t, c, *logo[0].Previews[0].Video, "video/mp4")
	})
	t.Run("category filter", func(t *testing.T) {
		c := c.at(t)
		want := []cfTemplate{}
		for _, tp := range portraits {
			if tp.Category == portraits[0].Category {
				want = append(want, tp)
			}
		}
		assert.Equal(t, want, templates(t, c, "category="+url.QueryEscape(portraits[0].Category)))
		assert.Empty(t, templates(t, c, "category=no-such-category"))
	})
	t.Run("title (repeatable, exact match)", func(t *testing.T) {
		c := c.at(t)
		require.GreaterOrEqual(t, len(portraits), 3)
		got := templates(t, c, "title="+url.QueryEscape(portraits[2].Title)+"&title="+url.QueryEscape(portraits[0].Title))
		assert.Equal(t, []cfTemplate{portraits[0], portraits[2]}, got, "in creation order")
		assert.Empty(t, templates(t, c, "title="+url.QueryEscape(strings.ToLower(portraits[0].Title))))
		assert.Empty(t, templates(t, c, "title="+url.QueryEscape(portraits[0].Title[:3])))
	})
	t.Run("perCategory (1 to 50, at most N of each category); rows in creation order", func(t *testing.T) {
		c := c.at(t)
		seen := map[string]int{}
		var want []cfTemplate
		for _, tp := range portraits {
			if seen[tp.Category] < 1 {
				want = append(want, tp)
			}
			seen[tp.Category]++
		}
		assert.Equal(t, want, templates(t, c, "perCategory=1"))
		assert.Equal(t, portraits, templates(t, c, "perCategory=50"))
		for _, q := range []string{"perCategory=0", "perCategory=51", "perCategory=-1", "perCategory=x"} {
			wantError(t, c.call(http.MethodGet, "/v3/templates?"+q, cfKey, nil), http.StatusBadRequest, "invalid_argument")
		}
	})
	t.Run("limit (1 to 500, caps the total)", func(t *testing.T) {
		c := c.at(t)
		assert.Equal(t, portraits[:2], templates(t, c, "limit=2"))
		assert.Equal(t, portraits, templates(t, c, "limit=500"))
		for _, q := range []string{"limit=0", "limit=501", "limit=x"} {
			wantError(t, c.call(http.MethodGet, "/v3/templates?"+q, cfKey, nil), http.StatusBadRequest, "invalid_argument")
		}
	})
	t.Run("GET /v3/templates/{previewId}: { preview: { id, templateId, title, feature, gender, prompt } }", func(t *testing.T) {
		c := c.at(t)
		for _, f := range []string{"image/self-portrait", "video/logo-reveal"} {
			tp := templates(t, c, "feature="+f+"&limit=1")[0]
			pv := tp.Previews[len(tp.Previews)-1]
			r := c.call(http.MethodGet, "/v3/templates/"+pv.ID, cfKey, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r)
			m := r.obj(t)
			assert.Equal(t, []string{"preview"}, keys(m))
			p := m["preview"].(map[string]any)
			assert.Equal(t, []string{"feature", "gender", "id", "prompt", "templateId", "title"}, keys(p))
			assert.Equal(t, pv.ID, p["id"])
			assert.Equal(t, tp.ID, p["templateId"])
			assert.Equal(t, tp.Title, p["title"])
			assert.Equal(t, f, p["feature"])
			assert.Equal(t, pv.Gender, p["gender"])
			assert.NotEmpty(t, p["prompt"])
			if f == "video/logo-reveal" {
				t.Run("prompt is the exact string to send as args.prompt", func(t *testing.T) {
					c := c.at(t)
					g := c.gen(cfKey, f, map[string]any{"image": c.image(cfKey), "prompt": p["prompt"]})
					assert.Equal(t, p["prompt"], g["params"].(map[string]any)["prompt"])
				})
			}
		}
		wantError(t, c.call(http.MethodGet, "/v3/templates/pvw_nope", cfKey, nil), http.StatusNotFound, "not_found")
	})
}

// ---------- agent endpoint, openapi, versioning ----------

func TestConformanceAgentEndpoint(t *testing.T) {
	t.Parallel()
	c := newCF(t)
	t.Run("GET and DELETE answer 405 (stateless, no session)", func(t *testing.T) {
		c := c.at(t)
		for _, m := range []string{http.MethodGet, http.MethodDelete} {
			wantError(t, c.call(m, "/v3/mcp", cfKey, nil), http.StatusMethodNotAllowed, "method_not_allowed")
		}
	})
	rpc := func(t *testing.T, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, c.url+"/v3/mcp", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", cfKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		r := c.send(req)
		require.Equal(t, http.StatusOK, r.status, "%s", r)
		require.Equal(t, "text/event-stream", r.header.Get("Content-Type"), "JSON-RPC response delivered as an SSE stream")
		var data []string
		for _, line := range strings.Split(string(r.body), "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimSpace(d))
			}
		}
		require.NotEmpty(t, data, "an SSE data line: %s", r.body)
		var msg map[string]any
		require.NoError(t, json.Unmarshal([]byte(strings.Join(data, "\n")), &msg))
		assert.Equal(t, "2.0", msg["jsonrpc"])
		return msg
	}
	t.Run("POST tools/list: 200 SSE with the documented tool names", func(t *testing.T) {
		msg := rpc(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		res := msg["result"].(map[string]any)
		names := map[string]bool{}
		for _, tool := range res["tools"].([]any) {
			names[tool.(map[string]any)["name"].(string)] = true
		}
		for _, n := range []string{"generate_ad", "generate_youtube_thumbnail", "generate_self_portrait", "generate_product_shot",
			"generate_avatar_video", "generate_logo_reveal", "generate_object_reveal", "generate_voiceover", "create_generation", "get_generation",
			// DESIGN.md: the tools for templates, pricing and uploads.
			"list_templates", "get_template_prompt", "get_pricing", "create_upload_url", "list_voices", "list_generations", "delete_generation"} {
			assert.True(t, names[n], "tool %s", n)
		}
	})
	t.Run("Generation tools submit and return the generation id; billing identical", func(t *testing.T) {
		c := c.at(t)
		before := c.balance(cfBill)
		_ = before
		msg := rpc(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_generation","arguments":{"feature":"image/generation","args":{"prompt":"p"}}}}`)
		res := msg["result"].(map[string]any)
		assert.NotEqual(t, true, res["isError"], "%v", res)
		raw, err := json.Marshal(res)
		require.NoError(t, err)
		ids, _, _ := c.list(cfKey, "")
		require.Len(t, ids, 1)
		assert.Contains(t, string(raw), ids[0], "the tool returns the generation id")
		g := c.mustGetGen(cfKey, ids[0])
		assert.InDelta(t, c.price("image/generation"), g["balanceUsed"], 1e-9)
	})
}

func TestConformanceOpenAPIAndVersioning(t *testing.T) {
	t.Parallel()
	c := newCF(t)
	t.Run("A machine-readable description (version field 1.0.0) at /v3/openapi.json", func(t *testing.T) {
		c := c.at(t)
		r := c.call(http.MethodGet, "/v3/openapi.json", cfKey, nil)
		require.Equal(t, http.StatusOK, r.status)
		m := r.obj(t)
		assert.Equal(t, "1.0.0", m["info"].(map[string]any)["version"])
		paths := m["paths"].(map[string]any)
		for _, p := range []string{"/v3/generations", "/v3/generations/{id}", "/v3/files/upload", "/v3/files/upload-url", "/v3/pricing",
			"/v3/voices", "/v3/voices/{id}", "/v3/voices/{id}/favorite", "/v3/templates", "/v3/templates/{previewId}", "/v3/mcp", "/v3/openapi.json"} {
			assert.Contains(t, paths, p)
		}
	})
	t.Run("The interface version is carried in the path prefix /v3", func(t *testing.T) {
		c := c.at(t)
		assert.Equal(t, http.StatusNotFound, c.call(http.MethodGet, "/v2/generations", cfKey, nil).status)
		assert.Equal(t, http.StatusOK, c.call(http.MethodGet, "/v3/generations", cfKey, nil).status)
	})
}

// ---------- tenant isolation ----------

func TestConformanceTenantIsolation(t *testing.T) {
	t.Parallel()
	c := newCF(t)
	g := c.gen(cfKey, "image/generation", map[string]any{"prompt": "mine"})
	id := g["id"].(string)
	c.finish()
	mineFile := c.image(cfKey)
	t.Run("All resources belong to a project (identified by the API key)", func(t *testing.T) {
		c := c.at(t)
		other := c.gen(cfOther, "image/generation", map[string]any{"prompt": "theirs"})
		assert.NotEqual(t, g["projectId"], other["projectId"])
		wantError(t, c.getGen(cfOther, id), http.StatusNotFound, "not_found")
		wantError(t, c.call(http.MethodDelete, "/v3/generations/"+id, cfOther, nil), http.StatusNotFound, "not_found")
		ids, _, _ := c.list(cfOther, "")
		assert.Equal(t, []string{other["id"].(string)}, ids)
		assert.Equal(t, http.StatusOK, c.getGen(cfKey, id).status, "still there for its owner")
		wantError(t, c.create(cfOther, "image/ad", map[string]any{"image": mineFile, "prompt": "p"}, ""), http.StatusBadRequest, "invalid_argument")
	})
	t.Run("a project's clones are its own", func(t *testing.T) {
		c := c.at(t)
		r := c.clone(cfKey, map[string]any{"name": "mine", "audio": c.sample(cfKey, 12*time.Second)})
		require.Equal(t, http.StatusOK, r.status)
		id := r.obj(t)["voice"].(map[string]any)["id"].(string)
		c.finish()
		wantError(t, c.call(http.MethodGet, "/v3/voices/"+id, cfOther, nil), http.StatusNotFound, "not_found")
		assert.NotContains(t, voiceIDs(t, c, cfOther, ""), id)
		wantError(t, c.create(cfOther, "audio/voiceover", map[string]any{"voiceId": id, "script": "hi"}, ""), http.StatusBadRequest, "invalid_argument")
		c.gen(cfKey, "audio/voiceover", map[string]any{"voiceId": id, "script": "hi"})
	})
}

// ---------- events ----------

type cfDelivery struct {
	method string
	at     time.Time
	header http.Header
	body   []byte
}

type cfReceiver struct {
	mu   sync.Mutex
	got  []cfDelivery
	fail int  // answer 500 to this many requests first
	hang bool // instead of 500, never answer the failing requests
	url  string
}

func newReceiver(t *testing.T, fail int) *cfReceiver {
	return startReceiver(t, &cfReceiver{fail: fail})
}

func startReceiver(t *testing.T, rc *cfReceiver) *cfReceiver {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, cfDelivery{r.Method, time.Now(), r.Header.Clone(), b})
		failing := len(rc.got) <= rc.fail
		rc.mu.Unlock()
		if failing && rc.hang {
			select { // until the sender gives up on the attempt
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
			return
		}
		if failing {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(ts.Close)
	rc.url = ts.URL + "/hook"
	return rc
}

func (rc *cfReceiver) deliveries() []cfDelivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

func TestConformanceWebhooks(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out real delivery retries; runs without -short")
	}
	t.Parallel()
	outcomes := map[string]refserver.Outcome{"image/ad": refserver.OutcomeError, "image/product-shot": refserver.OutcomeTimeout}
	var clones atomic.Int32
	c := newCF(t, refserver.WithAllowHTTPWebhooks(), refserver.WithOutcome(func(f string) refserver.Outcome {
		if f == "audio/voice-clone" && clones.Add(1) == 2 {
			return refserver.OutcomeError
		}
		if o, ok := outcomes[f]; ok {
			return o
		}
		return refserver.OutcomeDone
	}))
	proj, ok := c.srv.Project(cfKey)
	require.True(t, ok)
	secret := proj.WebhookSecret
	img := c.image(cfKey)
	verify := func(t *testing.T, d cfDelivery) map[string]any {
		t.Helper()
		require.NoError(t, webhook.Verify(d.body, d.header, secret, webhook.WithNow(c.clock.Now)))
		ts := d.header.Get("X-Service-Timestamp")
		n, err := strconv.ParseInt(ts, 10, 64)
		require.NoError(t, err, "X-Service-Timestamp: unix seconds")
		assert.Equal(t, c.clock.Now().Unix(), n, "unix seconds at sending")
		for _, entry := range strings.Fields(d.header.Get("X-Service-Signature")) {
			assert.Regexp(t, `^sha256=[0-9a-f]{64}$`, entry)
		}
		assert.Equal(t, webhook.Sign(secret, time.Unix(n, 0), d.body), d.header.Get("X-Service-Signature"),
			"HMAC-SHA256 keyed with the secret over <timestamp>.<raw body>")
		var m map[string]any
		require.NoError(t, json.Unmarshal(d.body, &m))
		return m
	}
	waitFor := func(t *testing.T, rc *cfReceiver, n int) []cfDelivery {
		t.Helper()
		require.Eventually(t, func() bool { return len(rc.deliveries()) >= n }, 20*time.Second, 10*time.Millisecond)
		c.srv.WaitDeliveries()
		return rc.deliveries()
	}

	t.Run("generation events: { event, generation } same as GET; sent once on the first terminal state", func(t *testing.T) {
		c := c.at(t)
		for _, tc := range []struct{ feat, event string }{
			{"image/generation", "generation.done"}, {"image/ad", "generation.error"}, {"image/product-shot", "generation.timeout"},
		} {
			rc := newReceiver(t, 0)
			args := map[string]any{"prompt": "p"}
			if tc.feat != "image/generation" {
				args["image"] = img
			}
			r := c.create(cfKey, tc.feat, args, rc.url)
			require.Equal(t, http.StatusOK, r.status, "%s", r)
			id := r.obj(t)["generation"].(map[string]any)["id"].(string)
			c.advance(time.Millisecond) // not finished yet: nothing sent
			c.finish()
			got := waitFor(t, rc, 1)
			m := verify(t, got[0])
			assert.Equal(t, http.MethodPost, got[0].method, "Delivery is an HTTP POST")
			assert.Equal(t, []string{"event", "generation"}, keys(m))
			assert.Equal(t, tc.event, m["event"])
			assert.Equal(t, c.mustGetGen(cfKey, id), m["generation"], "body content: same as GET /v3/generations/{id}")
			assert.Equal(t, "application/json", strings.Split(got[0].header.Get("Content-Type"), ";")[0])
			c.finish()
			c.getGen(cfKey, id)
			c.srv.WaitDeliveries()
			assert.Len(t, rc.deliveries(), 1, "sent once per generation; duplicates prevented")
		}
	})

	t.Run("voice events: voice.done and voice.error with { event, voice } same as GET", func(t *testing.T) {
		c := c.at(t)
		sample := c.sample(cfKey, 12*time.Second)
		for _, event := range []string{"voice.done", "voice.error"} {
			rc := newReceiver(t, 0)
			r := c.clone(cfKey, map[string]any{"name": event, "audio": sample, "webhookUrl": rc.url})
			require.Equal(t, http.StatusOK, r.status, "%s", r)
			id := r.obj(t)["voice"].(map[string]any)["id"].(string)
			c.finish()
			got := waitFor(t, rc, 1)
			m := verify(t, got[0])
			assert.Equal(t, []string{"event", "voice"}, keys(m))
			assert.Equal(t, event, m["event"])
			v := c.call(http.MethodGet, "/v3/voices/"+id, cfKey, nil)
			require.Equal(t, http.StatusOK, v.status)
			assert.Equal(t, v.obj(t)["voice"], m["voice"])
			c.finish()
			c.srv.WaitDeliveries()
			assert.Len(t, rc.deliveries(), 1)
		}
	})

	t.Run("a non-2xx answer is retried once after 2 seconds, then the delivery is dropped", func(t *testing.T) {
		c := c.at(t)
		once := newReceiver(t, 1)
		always := newReceiver(t, 100)
		slow := startReceiver(t, &cfReceiver{fail: 1, hang: true})
		for _, rc := range []*cfReceiver{once, always, slow} {
			r := c.create(cfKey, "image/generation", map[string]any{"prompt": "p"}, rc.url)
			require.Equal(t, http.StatusOK, r.status)
		}
		c.finish()
		for _, rc := range []*cfReceiver{once, always} {
			got := waitFor(t, rc, 2)
			require.Len(t, got, 2, "one retry, no more")
			assert.GreaterOrEqual(t, got[1].at.Sub(got[0].at), 1900*time.Millisecond, "after 2 seconds")
			assert.Equal(t, got[0].body, got[1].body, "the same event")
			verify(t, got[1])
		}
		t.Run("a receiver that does not answer within 5 seconds is retried once after 2 seconds", func(t *testing.T) {
			got := waitFor(t, slow, 2)
			require.Len(t, got, 2)
			assert.GreaterOrEqual(t, got[1].at.Sub(got[0].at), 6500*time.Millisecond, "5 s acknowledgement window, then 2 s")
		})
	})

	t.Run("key rotation: for 24 hours each delivery carries two signature entries", func(t *testing.T) {
		c := c.at(t)
		rotated, ok := c.srv.RotateWebhookSecret(cfKey)
		require.True(t, ok)
		rc := newReceiver(t, 0)
		require.Equal(t, http.StatusOK, c.create(cfKey, "image/generation", map[string]any{"prompt": "p"}, rc.url).status)
		c.finish()
		d := waitFor(t, rc, 1)[0]
		assert.Len(t, strings.Fields(d.header.Get("X-Service-Signature")), 2)
		require.NoError(t, webhook.Verify(d.body, d.header, secret, webhook.WithNow(c.clock.Now)), "old key")
		require.NoError(t, webhook.Verify(d.body, d.header, rotated.WebhookSecret, webhook.WithNow(c.clock.Now)), "new key")
		secret = rotated.WebhookSecret

		c.advance(24*time.Hour + time.Second)
		later := newReceiver(t, 0)
		require.Equal(t, http.StatusOK, c.create(cfKey, "image/generation", map[string]any{"prompt": "p"}, later.url).status)
		c.finish()
		d = waitFor(t, later, 1)[0]
		assert.Len(t, strings.Fields(d.header.Get("X-Service-Signature")), 1, "after 24 hours only the new key signs")
		verify(t, d)
	})

}
