package refserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/feature"
	"github.com/mediagen/mediagen-go/internal/refserver/catalog"
)

// The seed corpora are in testdata/fuzz/<FuzzName>/; inputs name the
// fixtures of fuzzenv_test.go by placeholders (KEYA, IMAGEID, ASSETURL...).

// FuzzHandlers sends arbitrary requests (method, target, headers, body) to
// every route of the server and of its test-control API. Whatever comes in:
// no panic, no 5xx (faults are off), every error answered with the
// documented JSON body, money moved only by a 2xx of a charging route (or
// of the test-control balance setter) and by exactly what the answer says,
// and storage serving or accepting bytes only through a URL the server
// signed.
func FuzzHandlers(f *testing.F) {
	f.Add("GET", "/v3/generations/GENID", "Authorization: KEYA", []byte(nil))
	f.Add("POST", "/v3/generations", "Authorization: KEYA\nContent-Type: application/json",
		[]byte(`{"feature":"image/generation","args":{"prompt":"a red fox"}}`))
	host := newFuzzHost(f)
	f.Fuzz(func(t *testing.T, method, target, headers string, body []byte) {
		e := host.env(t)
		method, target, header, body, ok := fuzzRequest(e, method, target, headers, body)
		if !ok {
			return
		}
		before := e.balances()
		rec := e.serve(method, target, header, body)
		after := e.balances()

		require.Less(t, rec.Code, 500, "%s %s: %s", method, target, rec.Body)
		requireErrorBody(t, method, rec)
		u, err := url.ParseRequestURI(target)
		require.NoError(t, err)
		requireMoneyRule(t, method, u.Path, header, rec, before, after)
		if strings.HasPrefix(u.Path, "/storage/") && rec.Code < 300 {
			requireSigned(t, e, method, u, header, body)
		}
	})
}

// requireErrorBody checks that an error answer carries the documented body:
// {"error":{"code","message"}}, the 402 shape being a superset of it.
func requireErrorBody(t *testing.T, method string, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code < 400 || method == http.MethodHead {
		return
	}
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"), "%d %s", rec.Code, rec.Body)
	var e api.Error
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e), "%d %s", rec.Code, rec.Body)
	require.NotEmpty(t, e.Error.Code, "%d %s", rec.Code, rec.Body)
	require.NotEmpty(t, e.Error.Message, "%d %s", rec.Code, rec.Body)
}

// requireMoneyRule checks the balances around one request: only the
// caller's project may change, only on a 2xx of a route that charges (down,
// by what the answer reports) or of the test-control setter (to what it
// answers).
func requireMoneyRule(t *testing.T, method, path string, header http.Header, rec *httptest.ResponseRecorder, before, after map[string]int64) {
	t.Helper()
	for key, was := range before {
		now := after[key]
		if now == was {
			continue
		}
		require.Equal(t, []string{key}, header.Values("Authorization"), "the balance of a project that did not call changed")
		require.True(t, rec.Code >= 200 && rec.Code < 300, "%s %s answered %d and moved %d units: %s", method, path, rec.Code, now-was, rec.Body)
		route := method + " " + path
		switch route {
		case "PUT " + TestControlPrefix + "/balance":
			var st balanceState
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &st))
			require.NotNil(t, st.Balance)
			require.Equal(t, toUnits(*st.Balance), now)
		case "POST /v3/generations":
			var g api.GenerationEnvelope
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &g))
			require.Equal(t, toUnits(g.Generation.BalanceUsed), was-now, "charged other than balanceUsed")
		case "POST /v3/voices":
			require.Equal(t, cost(feature.VoiceClone, nil), was-now, "a clone charged other than its price")
		case "POST /v3/mcp":
			res, ok := agentResult(rec.Body.Bytes())
			require.True(t, ok, "the agent charged without a tool result: %s", rec.Body)
			require.False(t, res.IsError, "the agent charged on an error result: %s", rec.Body)
			var g api.GenerationEnvelope
			require.NoError(t, json.Unmarshal(res.StructuredContent, &g), "%s", rec.Body)
			require.Equal(t, toUnits(g.Generation.BalanceUsed), was-now, "charged other than balanceUsed")
		default:
			t.Fatalf("%s answered %d and moved %d units: %s", route, rec.Code, now-was, rec.Body)
		}
	}
}

// requireSigned checks a storage request that succeeded: it used one of
// the URLs the fixtures were given, with its method, and an upload carried
// exactly the signed bytes.
func requireSigned(t *testing.T, e *fuzzEnv, method string, u *url.URL, header http.Header, body []byte) {
	t.Helper()
	for i, s := range e.signed {
		if !sameSignedURL(u, s) {
			continue
		}
		if i == 0 { // the upload
			require.Equal(t, http.MethodPut, method)
			require.Equal(t, []string{"image/png"}, header.Values("Content-Type"))
			require.Len(t, body, 64)
		} else {
			require.Contains(t, []string{http.MethodGet, http.MethodHead}, method)
		}
		return
	}
	t.Fatalf("storage answered %s %s, a URL the server did not sign", method, u)
}

// toolResult is the part of an MCP tools/call result the targets check.
type toolResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Text string `json:"text"`
	} `json:"content"`
}

// agentResult reads the JSON-RPC result out of the agent endpoint's event
// stream; ok is false when the stream holds no result (an error or none).
func agentResult(stream []byte) (toolResult, bool) {
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var msg struct {
			Result *toolResult `json:"result"`
		}
		if json.Unmarshal([]byte(data), &msg) == nil && msg.Result != nil {
			return *msg.Result, true
		}
	}
	return toolResult{}, false
}

// FuzzGenerationArgs submits arbitrary arguments to every feature through
// POST /v3/generations and judges the answer against DESIGN.md's argument
// list, restated below independently of args.go: a call is accepted (200)
// exactly when every argument is documented, well typed and in range, the
// required ones present and the files and voices usable; a likeness
// without permissionConfirmed is 403; anything else is 400. An accepted
// call is charged once, exactly what the client's estimate says (within its
// range for an avatar), and echoes its arguments; a refused one charges
// nothing.
func FuzzGenerationArgs(f *testing.F) {
	f.Add("image/generation", []byte(`{"prompt":"a red fox","aspectRatio":"4:3","fineDetails":true}`))
	f.Add("logo-reveal", []byte(`{"image":"IMAGEID","prompt":"sparks","duration":10,"resolution":"1080p","background":"#fff"}`))
	host := newFuzzHost(f)
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		if !utf8.ValidString(name) || !json.Valid(args) {
			return // the body's own checks, which FuzzHandlers covers
		}
		e := host.env(t)
		args = []byte(e.expand(string(args)))
		quoted, err := json.Marshal(name)
		require.NoError(t, err)
		body := []byte(`{"feature":` + string(quoted) + `,"args":` + string(args) + `}`)

		var decoded any
		require.NoError(t, json.Unmarshal(args, &decoded))
		want := expectedStatus(e, name, decoded)
		if jsonTextProblem(body) != "" {
			want = http.StatusBadRequest // invalid UTF-8 or a lone surrogate
		}

		before := e.balances()[fuzzKeyA]
		rec := e.serve(http.MethodPost, "/v3/generations", http.Header{"Authorization": {fuzzKeyA}, "Content-Type": {"application/json"}}, body)
		charged := before - e.balances()[fuzzKeyA]
		require.Equal(t, want, rec.Code, "%s %s: %s", name, args, rec.Body)
		if rec.Code != http.StatusOK {
			requireErrorBody(t, http.MethodPost, rec)
			require.Zero(t, charged, "a refused call was charged")
			return
		}
		var g api.GenerationEnvelope
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &g))
		require.Equal(t, decoded, g.Generation.Params, "the arguments are not echoed as sent")
		require.Equal(t, toUnits(g.Generation.BalanceUsed), charged)
		prices := client.Pricing{}
		for f, e := range pricingTable().Prices {
			prices[mediagen.Feature(f)] = e
		}
		est, err := prices.Estimate(client.RawArgs{FeatureName: mediagen.Feature(name), Values: decoded.(map[string]any)})
		require.NoError(t, err, "the client cannot estimate a call the server accepted")
		require.GreaterOrEqual(t, charged, toUnits(est.Min), "%s", est)
		require.LessOrEqual(t, charged, toUnits(est.Max), "%s", est)
		if est.Exact() {
			require.Equal(t, toUnits(est.Min), charged, "%s", est)
		}
	})
}

// docArg is one documented argument: whether it is required, and whether a
// present, non-null value is acceptable.
type docArg struct {
	required bool
	ok       func(e *fuzzEnv, v any) bool
}

func docText(required bool, max int) docArg {
	return docArg{required, func(_ *fuzzEnv, v any) bool {
		s, isStr := v.(string)
		return isStr && strings.IndexFunc(s, shows) >= 0 && utf8.RuneCountInString(s) <= max
	}}
}

// shows is the rule of a visible character: not a control, a space, a
// format character or one of the other code points renderers show as
// nothing.
func shows(r rune) bool {
	return !unicode.IsControl(r) && !unicode.IsSpace(r) && !unicode.Is(unicode.Cf, r) &&
		!unicode.Is(unicode.Variation_Selector, r) && !unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}

func docEnum(values ...string) docArg {
	return docArg{false, func(_ *fuzzEnv, v any) bool {
		s, isStr := v.(string)
		return isStr && slices.Contains(values, s)
	}}
}

var docColourPattern = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

var (
	docBool     = docArg{false, func(_ *fuzzEnv, v any) bool { _, ok := v.(bool); return ok }}
	docAspect   = docEnum("1:1", "16:9", "9:16", "4:3", "3:4")
	docRes      = docEnum("720p", "1080p")
	docDuration = docArg{false, func(_ *fuzzEnv, v any) bool {
		n, ok := v.(float64)
		return ok && n == math.Trunc(n) && n >= 3 && n <= 10
	}}
	docColour = docArg{false, func(_ *fuzzEnv, v any) bool {
		s, ok := v.(string)
		return ok && docColourPattern.MatchString(s)
	}}
	// Of the fixtures, only IMAGEID is a whole image of project A.
	docImage    = docArg{true, func(e *fuzzEnv, v any) bool { return v == e.ids["IMAGEID"] }}
	docOptImage = docArg{false, docImage.ok}
	// A catalog voice by id or slug, or project A's trained clone.
	docVoice = docArg{true, func(e *fuzzEnv, v any) bool {
		s, _ := v.(string)
		_, inCatalog := catalog.LookupVoice(s)
		return s != "" && (inCatalog || s == e.ids["VOICEID"])
	}}
	docPrompt    = docText(true, 10000)
	docOptPrompt = docText(false, 10000)
)

// documented lists each feature's arguments as DESIGN.md states them.
var documented = map[string]map[string]docArg{
	"image/generation":        {"prompt": docPrompt, "aspectRatio": docAspect, "fineDetails": docBool, "image": docOptImage},
	"image/self-portrait":     {"image": docImage, "prompt": docPrompt, "aspectRatio": docAspect, "permissionConfirmed": docBool},
	"image/product-shot":      {"image": docImage, "prompt": docPrompt, "aspectRatio": docAspect, "fineDetails": docBool},
	"image/ad":                {"image": docImage, "prompt": docPrompt, "aspectRatio": docAspect, "fineDetails": docBool},
	"image/youtube-thumbnail": {"prompt": docPrompt, "image": docOptImage, "aspectRatio": docAspect, "fineDetails": docBool},
	"video/logo-reveal": {"image": docImage, "prompt": docPrompt, "mode": docEnum("intro", "outro"),
		"aspectRatio": docEnum("16:9", "9:16"), "background": docColour, "generateAudio": docBool,
		"duration": docDuration, "resolution": docRes},
	string(mediagen.FeatureVideoObjectReveal): {"image": docImage, "prompt": docPrompt, "aspectRatio": docAspect, "duration": docDuration, "resolution": docRes},
	// Any feature takes an optional prompt from a template.
	"video/avatar": {"voiceId": docVoice, "script": docText(true, 5000), "image": docOptImage, "aspectRatio": docAspect,
		"resolution": docRes, "permissionConfirmed": docBool, "prompt": docOptPrompt},
	"audio/voiceover": {"voiceId": docVoice, "script": docText(true, 20000), "prompt": docOptPrompt},
}

// expectedStatus is the answer DESIGN.md gives to a call of feature name
// with args (decoded JSON) as project A: 200, 400 or 403.
func expectedStatus(e *fuzzEnv, name string, args any) int {
	info, ok := feature.Lookup(name)
	if !ok {
		return http.StatusBadRequest
	}
	m, ok := args.(map[string]any)
	if !ok || m == nil {
		return http.StatusBadRequest
	}
	doc := documented[info.Name]
	// Every key is visited, in no particular order, so that the work does
	// not depend on map order.
	valid := true
	for k, v := range m {
		d, ok := doc[k]
		valid = valid && ok && v != nil && d.ok(e, v)
	}
	for k, d := range doc {
		_, ok := m[k]
		valid = valid && (ok || !d.required)
	}
	if !valid {
		return http.StatusBadRequest
	}
	if info.Name == "image/self-portrait" || info.Name == "video/avatar" {
		if m["permissionConfirmed"] != true {
			return http.StatusForbidden
		}
	}
	return http.StatusOK
}

// cursorRow is a generation as list order sees it.
type cursorRow struct {
	t  time.Time
	id string
}

// FuzzCursor lists a fixed set of generations from arbitrary cursors and
// limits. A cursor is accepted (200) exactly when it decodes; the page is
// then exactly the rows after the cursor's position in list order (newest
// first, ties by id), at most limit of them (default 24, at most 100), with
// a nextCursor exactly when rows remain, which decodes to the page's last
// row. A decoded cursor's position survives encoding again.
func FuzzCursor(f *testing.F) {
	clock := NewFakeClock(testStart)
	srv := New(WithClock(clock), WithProject(fuzzKeyA, 100), WithoutWebhookDelivery())
	srv.Close()
	list := func(query string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/v3/generations?"+query, nil)
		req.Header.Set("Authorization", fuzzKeyA)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	// Rows one second apart, two at the same instant, one at a fraction of
	// a second: every branch of the order.
	var rows []cursorRow
	for i, step := range []time.Duration{0, time.Second, 0, 1500 * time.Millisecond, time.Hour, time.Second, 0, time.Nanosecond} {
		clock.Advance(step)
		body := fmt.Sprintf(`{"feature":"image/generation","args":{"prompt":"row %d"}}`, i)
		req := httptest.NewRequest(http.MethodPost, "/v3/generations", strings.NewReader(body))
		req.Header.Set("Authorization", fuzzKeyA)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		require.Equal(f, http.StatusOK, rec.Code, rec.Body.String())
		var g api.GenerationEnvelope
		require.NoError(f, json.Unmarshal(rec.Body.Bytes(), &g))
		rows = append(rows, cursorRow{clock.Now(), g.Generation.ID})
	}
	slices.SortFunc(rows, func(a, b cursorRow) int {
		if !a.t.Equal(b.t) {
			return b.t.Compare(a.t)
		}
		return strings.Compare(b.id, a.id)
	})
	f.Add(encodeCursor(&generation{requestDate: rows[2].t, id: rows[2].id}), 2)
	f.Add("", 0)

	f.Fuzz(func(t *testing.T, cur string, limit int) {
		c, err := decodeCursor(cur)
		if err == nil && c.t.Year() >= 1 && c.t.Year() <= 9999 {
			again, err := decodeCursor(encodeCursor(&generation{requestDate: c.t, id: c.id}))
			require.NoError(t, err)
			require.True(t, again.t.Equal(c.t), "%s became %s", c.t, again.t)
			require.Equal(t, c.id, again.id)
		}

		rec := list(url.Values{"cursor": {cur}, "limit": {strconv.Itoa(limit)}}.Encode())
		if cur == "" || err == nil {
			require.Equal(t, http.StatusOK, rec.Code, "%q: %s", cur, rec.Body)
		} else {
			require.Equal(t, http.StatusBadRequest, rec.Code, "%q: %s", cur, rec.Body)
			requireErrorBody(t, http.MethodGet, rec)
			return
		}
		var page api.GenerationList
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page))
		want := rows
		if cur != "" {
			want = slices.DeleteFunc(slices.Clone(rows), func(r cursorRow) bool {
				return !newestFirst(c.t, c.id, r.t, r.id)
			})
		}
		size := 24
		if limit >= 1 {
			size = min(limit, 100)
		}
		more := len(want) > size
		want = want[:min(size, len(want))]
		got := make([]cursorRow, len(page.Generations))
		for i, g := range page.Generations {
			got[i] = cursorRow{g.RequestDate, g.ID}
		}
		require.Len(t, got, len(want))
		for i := range want {
			require.Equal(t, want[i].id, got[i].id, "row %d", i)
		}
		require.Equal(t, more, page.NextCursor != nil)
		if more {
			next, err := decodeCursor(*page.NextCursor)
			require.NoError(t, err)
			last := want[len(want)-1]
			require.True(t, next.t.Equal(last.t))
			require.Equal(t, last.id, next.id)
		}
	})
}

// uploadPart is a file of a multipart upload: its name and size.
type uploadPart struct {
	name string
	size int
}

// FuzzUploadFiles posts arbitrary multipart bodies to POST
// /v3/files/upload and compares the answer with the standard library's own
// reading of the body: a body it cannot read, with no file under "files" or
// more than ten is 400; an accepted one (200) lists exactly those files, in
// order, with their names and sizes, and adds exactly them to the server; a
// refused one adds none. Nothing is ever charged.
func FuzzUploadFiles(f *testing.F) {
	f.Add("multipart/form-data; boundary=B",
		[]byte("--B\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a.txt\"\r\n\r\nhello\r\n--B--\r\n"))
	host := newFuzzHost(f)
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		e := host.env(t)
		want, werr := readUpload(contentType, body)
		before, files := e.balances(), e.fileCount()
		rec := e.serve(http.MethodPost, "/v3/files/upload", http.Header{"Authorization": {fuzzKeyA}, "Content-Type": {contentType}}, body)
		require.Equal(t, before, e.balances(), "an upload moved money")
		require.Less(t, rec.Code, 500, "%s", rec.Body)
		requireErrorBody(t, http.MethodPost, rec)
		if rec.Code != http.StatusOK {
			require.Equal(t, http.StatusBadRequest, rec.Code, "%s", rec.Body)
			require.Equal(t, files, e.fileCount(), "a refused upload kept files")
			return
		}
		require.NoError(t, werr, "accepted a body the standard library cannot read")
		require.NotEmpty(t, want, "accepted an upload without files")
		require.LessOrEqual(t, len(want), maxFilesPerBatch)
		var out api.FileList
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		got := make([]uploadPart, len(out.Files))
		for i, f := range out.Files {
			got[i] = uploadPart{f.OriginalName, int(f.Size)}
		}
		for i := range want {
			// JSON carries text only: a name that is not UTF-8 comes back
			// with U+FFFD for each invalid byte.
			b, err := json.Marshal(want[i].name)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &want[i].name))
		}
		require.Equal(t, want, got)
		require.Equal(t, files+len(want), e.fileCount())
	})
}

// readUpload reads the files under "files" of a multipart/form-data body
// with the standard library alone.
func readUpload(contentType string, body []byte) ([]uploadPart, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, err
	}
	if mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, fmt.Errorf("not multipart/form-data with a boundary: %q", contentType)
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var parts []uploadPart
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return parts, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		if p.FormName() == "files" {
			parts = append(parts, uploadPart{p.FileName(), len(data)})
		}
	}
}

// fileCount is the number of files the server holds, reserved or landed.
func (e *fuzzEnv) fileCount() int {
	e.srv.mu.Lock()
	defer e.srv.mu.Unlock()
	return len(e.srv.files)
}

// FuzzStorageURL sends arbitrary requests to the storage host, mostly
// alterations of the two URLs the fixtures were signed (UPLOADURL and
// ASSETURL), at an arbitrary time up to two days later. Storage may serve
// or accept bytes only through the very URL it signed (same path, the
// query holding exactly the signed expires and signature), with the signed
// method, before the expiry, without an Authorization header, and for an
// upload with exactly the signed Content-Type and length. Conversely the
// very URL, fresh, is honoured. Never a 5xx.
func FuzzStorageURL(f *testing.F) {
	f.Add("GET", "ASSETURL", "", int64(0), []byte(nil))
	f.Add("PUT", "UPLOADURL", "Content-Type: image/png", int64(899), bytes.Repeat([]byte{1}, 64))
	host := newFuzzHost(f)
	f.Fuzz(func(t *testing.T, method, target, headers string, skew int64, body []byte) {
		e := host.env(t)
		method, target, header, body, ok := fuzzRequest(e, method, target, headers, body)
		if !ok {
			return
		}
		u, err := url.ParseRequestURI(target)
		require.NoError(t, err)
		if skew < 0 {
			skew = -(skew + 1)
		}
		e.clock.Advance(time.Duration(skew%(48*3600)) * time.Second)
		rec := e.serve(method, target, header, body)
		require.Less(t, rec.Code, 500, "%s %s: %s", method, target, rec.Body)
		requireErrorBody(t, method, rec)

		served := rec.Code < 300 || rec.Code == http.StatusNotModified
		if !strings.HasPrefix(u.Path, "/storage/") {
			return
		}
		signed := -1
		for i, s := range e.signed {
			if sameSignedURL(u, s) {
				signed = i
			}
		}
		if served {
			require.GreaterOrEqual(t, signed, 0, "storage answered %d to %s %s, a URL it did not sign", rec.Code, method, target)
			exp, err := strconv.ParseInt(u.Query().Get("expires"), 10, 64)
			require.NoError(t, err)
			require.True(t, e.clock.Now().Before(time.Unix(exp, 0)), "served after the expiry")
			require.Empty(t, header.Values("Authorization"))
			if signed == 0 {
				require.Equal(t, http.MethodPut, method)
				require.Equal(t, []string{"image/png"}, header.Values("Content-Type"))
				require.Len(t, body, 64)
			} else {
				require.Contains(t, []string{http.MethodGet, http.MethodHead}, method)
			}
		}
		if signed == 1 && method == http.MethodGet && len(header) == 0 {
			exp, _ := strconv.ParseInt(u.Query().Get("expires"), 10, 64)
			if e.clock.Now().Before(time.Unix(exp, 0)) && e.clock.Now().Before(testStart.Add(retention)) {
				require.Equal(t, http.StatusOK, rec.Code, "the signed URL, fresh, was refused: %s", rec.Body)
			}
		}
	})
}

// sameSignedURL reports whether u is the signed URL s: the same path, and
// a well-formed query of exactly s's expires and signature, once each.
func sameSignedURL(u, s *url.URL) bool {
	q, err := url.ParseQuery(u.RawQuery)
	sq := s.Query()
	return err == nil && u.Path == s.Path && len(q) == 2 &&
		slices.Equal(q["expires"], sq["expires"]) && slices.Equal(q["signature"], sq["signature"])
}

// chargingTools are the agent tools that submit a generation.
var chargingTools = map[string]bool{
	"create_generation": true, "generate_ad": true, "generate_youtube_thumbnail": true, "generate_self_portrait": true,
	"generate_product_shot": true, "generate_avatar_video": true, "generate_logo_reveal": true,
	"generate_object_reveal": true, "generate_voiceover": true,
}

var httpStatusPrefix = regexp.MustCompile(`^HTTP (\d{3})\b`)

// FuzzAgentToolCall calls agent tools (POST /v3/mcp, JSON-RPC tools/call)
// with arbitrary names and arguments. Never a panic or a 5xx, in HTTP or in
// a tool result; money moves only with a successful result of a tool that
// submits a generation, by what the result reports; and create_generation
// refuses exactly as POST /v3/generations does for the same body.
func FuzzAgentToolCall(f *testing.F) {
	f.Add("create_generation", []byte(`{"feature":"image/generation","args":{"prompt":"from an agent"}}`))
	f.Add("generate_logo_reveal", []byte(`{"image":"IMAGEID","prompt":"sparks","duration":11}`))
	host := newFuzzHost(f)
	f.Fuzz(func(t *testing.T, tool string, arguments []byte) {
		if !json.Valid(arguments) {
			return // the body's own checks, which FuzzHandlers covers
		}
		e := host.env(t)
		arguments = []byte(e.expand(string(arguments)))
		name, err := json.Marshal(tool)
		require.NoError(t, err)
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + string(name) + `,"arguments":` + string(arguments) + `}}`)
		header := http.Header{"Authorization": {fuzzKeyA}, "Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}

		before := e.balances()
		rec := e.serve(http.MethodPost, "/v3/mcp", header, body)
		after := e.balances()
		require.Less(t, rec.Code, 500, "%s", rec.Body)
		requireErrorBody(t, http.MethodPost, rec)
		requireMoneyRule(t, http.MethodPost, "/v3/mcp", header, rec, before, after)
		res, ok := agentResult(rec.Body.Bytes())
		if !ok {
			return // a JSON-RPC error: an unknown tool or arguments off its schema
		}
		summary := ""
		if len(res.Content) > 0 {
			summary = res.Content[0].Text
		}
		m := httpStatusPrefix.FindStringSubmatch(summary)
		if m != nil {
			status, err := strconv.Atoi(m[1])
			require.NoError(t, err)
			require.Less(t, status, 500, "a tool answered %s", summary)
		}
		if !res.IsError {
			if after[fuzzKeyA] == before[fuzzKeyA] {
				require.False(t, chargingTools[tool], "a generation was submitted for free: %s", summary)
			}
			return
		}
		if tool != "create_generation" || m == nil {
			return
		}
		var in struct {
			Feature    string          `json:"feature"`
			Args       json.RawMessage `json:"args"`
			WebhookURL string          `json:"webhookUrl,omitempty"`
		}
		if json.Unmarshal(arguments, &in) != nil {
			return // the tool read what the route would not: nothing to compare
		}
		direct, err := json.Marshal(in)
		require.NoError(t, err)
		again := e.serve(http.MethodPost, "/v3/generations", http.Header{"Authorization": {fuzzKeyA}, "Content-Type": {"application/json"}}, direct)
		require.Equal(t, m[1], strconv.Itoa(again.Code), "the tool answered %q, the route %s", summary, again.Body)
	})
}
