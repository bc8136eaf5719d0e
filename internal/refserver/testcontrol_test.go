package refserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/refserver/catalog"
	"github.com/mediagen/mediagen-go/internal/refserver/fault"
	"github.com/mediagen/mediagen-go/openapi"
	"github.com/mediagen/mediagen-go/webhook"
)

// testControlSpec is openapi/testcontrol.json, loaded and validated.
func testControlSpec(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile("../../openapi/testcontrol.json")
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()), "testcontrol.json is a valid OpenAPI document")
	require.Equal(t, "3.0.3", doc.OpenAPI)
	return doc
}

// tcHarness is a harness whose listener also serves the test-control API,
// the way the command mounts it, and that checks every answer of a route
// the spec lists against the spec.
type tcHarness struct {
	*harness
	url  string
	spec *openapi3.T
}

func newTCHarness(t *testing.T, opts ...Option) *tcHarness {
	t.Helper()
	h := newHarness(t, append([]Option{WithFaults(fault.Config{})}, opts...)...)
	tc := h.srv.TestControl()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if IsTestControlPath(r.URL.Path) {
			tc.ServeHTTP(w, r)
			return
		}
		h.srv.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return &tcHarness{harness: h, url: ts.URL, spec: testControlSpec(t)}
}

// call sends a test-control or /v3 request as key with a JSON body (none
// when body is "") and returns the status and the decoded JSON answer.
func (c *tcHarness) call(method, path, key, body string) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	ct := ""
	if body != "" {
		rd, ct = strings.NewReader(body), "application/json"
	}
	status, hdr, b := c.raw(method, c.url+path, key, ct, rd)
	var out map[string]any
	if len(b) > 0 {
		require.NoError(c.t, json.Unmarshal(b, &out), string(b))
	}
	if IsTestControlPath(path) {
		assert.Equal(c.t, "application/json", hdr.Get("Content-Type"))
		c.conforms(method, path, status, out)
	}
	return status, out
}

// conforms checks that an answer of a route the spec lists has a status the
// spec lists for it and a body its schema accepts.
func (c *tcHarness) conforms(method, path string, status int, body map[string]any) {
	c.t.Helper()
	for tmpl, item := range c.spec.Paths.Map() {
		re := regexp.MustCompile("^" + regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(tmpl, "[^/]+") + "$")
		if !re.MatchString(path) {
			continue
		}
		op := item.GetOperation(method)
		if op == nil {
			return // a wrong method: 405, no operation to check against
		}
		ref := op.Responses.Status(status)
		require.NotNil(c.t, ref, "%s %s answered %d, which the spec does not list", method, tmpl, status)
		schema := ref.Value.Content.Get("application/json").Schema.Value
		var generic any = body
		assert.NoError(c.t, schema.VisitJSON(generic), "%s %s %d: %v", method, tmpl, status, body)
		return
	}
}

// code returns the error code of an error answer.
func code(t *testing.T, body map[string]any) string {
	t.Helper()
	e, ok := body["error"].(map[string]any)
	require.True(t, ok, "error body: %v", body)
	assert.NotEmpty(t, e["message"])
	return e["code"].(string)
}

func TestTestControlRoutesMatchTheSpec(t *testing.T) {
	spec := testControlSpec(t)
	var inSpec []string
	for path, item := range spec.Paths.Map() {
		for method := range item.Operations() {
			inSpec = append(inSpec, method+" "+path)
		}
	}
	var served []string
	for _, rt := range (&testControl{s: nil}).routes() {
		served = append(served, rt.method+" "+rt.path)
		assert.True(t, IsTestControlPath(rt.path), rt.path)
	}
	assert.ElementsMatch(t, inSpec, served)

	// The JSON forms keep every field of the fault package's types, and the
	// spec describes exactly those fields.
	jsonNames := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			out = append(out, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
		}
		return out
	}
	goNames := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			out = append(out, rt.Field(i).Name)
		}
		return out
	}
	assert.Equal(t, goNames(fault.Config{}), goNames(faultConfig{}), "faultConfig mirrors fault.Config")
	assert.Equal(t, goNames(fault.Stats{}), goNames(faultStats{}), "faultStats mirrors fault.Stats")
	props := func(name string) []string {
		var out []string
		for k := range spec.Components.Schemas[name].Value.Properties {
			out = append(out, k)
		}
		return out
	}
	assert.ElementsMatch(t, jsonNames(faultConfig{}), props("FaultConfig"))
	assert.ElementsMatch(t, jsonNames(faultStats{}), props("FaultStats"))
}

func TestTestControlIsNotInTheContract(t *testing.T) {
	var doc struct {
		Paths map[string]any `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(openapi.Spec(), &doc))
	require.NotEmpty(t, doc.Paths)
	for p := range doc.Paths {
		assert.False(t, IsTestControlPath(p), "openapi.json must not describe %s", p)
	}
}

func TestTestControlOffByDefault(t *testing.T) {
	h := newHarness(t)
	for _, rt := range (&testControl{}).routes() {
		path := strings.Replace(rt.path, "{voice}", "narrator", 1)
		status, hdr, body := h.raw(rt.method, path, keyA, "application/json", strings.NewReader("{}"))
		assert.Equal(t, http.StatusNotFound, status, "%s %s", rt.method, path)
		assert.Equal(t, "not_found", errorCode(t, hdr, body))
	}
}

func TestTestControlNeedsTheProjectKey(t *testing.T) {
	c := newTCHarness(t)
	for _, rt := range (&testControl{}).routes() {
		path := strings.Replace(rt.path, "{voice}", "narrator", 1)
		for _, key := range []string{"", "wrong", "Bearer " + keyA} {
			status, body := c.call(rt.method, path, key, "{}")
			assert.Equal(t, http.StatusUnauthorized, status, "%s %s as %q", rt.method, path, key)
			assert.Equal(t, "unauthorized", code(t, body))
		}
	}
	// Like /v3, a path is revealed only to a caller with a key.
	status, body := c.call(http.MethodGet, TestControlPrefix+"/nope", "", "")
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, "unauthorized", code(t, body))
	status, body = c.call(http.MethodGet, TestControlPrefix+"/nope", keyA, "")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "not_found", code(t, body))
	status, body = c.call(http.MethodDelete, TestControlPrefix+"/clock", keyA, "")
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	assert.Equal(t, "method_not_allowed", code(t, body))
}

func TestTestControlClock(t *testing.T) {
	c := newTCHarness(t)
	status, body := c.call(http.MethodGet, TestControlPrefix+"/clock", keyA, "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, testStart.Format(time.RFC3339Nano), body["now"])

	status, body = c.call(http.MethodPost, TestControlPrefix+"/clock/advance", keyA, `{"seconds": 90.5}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, testStart.Add(90500*time.Millisecond).Format(time.RFC3339Nano), body["now"])
	status, body = c.call(http.MethodPost, TestControlPrefix+"/clock/advance", keyB, `{"duration": "1h"}`)
	require.Equal(t, http.StatusOK, status, body)
	want := testStart.Add(time.Hour + 90500*time.Millisecond)
	assert.Equal(t, want.Format(time.RFC3339Nano), body["now"])
	assert.Equal(t, want, c.clock.Now(), "the server's own clock moved")
	status, _ = c.call(http.MethodPost, TestControlPrefix+"/clock/advance", keyA, `{"seconds": 0}`)
	assert.Equal(t, http.StatusOK, status, "zero only settles")

	for _, bad := range []string{
		``, `{}`, `{"seconds": 1, "duration": "1s"}`, `{"seconds": -1}`, `{"duration": "-1s"}`,
		`{"duration": "soon"}`, `{"seconds": "5"}`, `{"secs": 5}`, `{"seconds": 1} {}`, `[1]`,
		`{"seconds": 1e12}`, `{"duration": "100000h"}`,
	} {
		status, body := c.call(http.MethodPost, TestControlPrefix+"/clock/advance", keyA, bad)
		assert.Equal(t, http.StatusBadRequest, status, bad)
		assert.Equal(t, "invalid_argument", code(t, body), bad)
	}
	assert.Equal(t, want, c.clock.Now(), "refused advances do not move the clock")
}

func TestTestControlAdvanceSettles(t *testing.T) {
	c := newTCHarness(t)
	id := c.createImage(keyA)
	status, body := c.call(http.MethodPost, TestControlPrefix+"/clock/advance", keyA, `{"duration": "5m"}`)
	require.Equal(t, http.StatusOK, status, body)
	// Settle waited for the events to be dispatched: no polling needed.
	events := c.recorded()
	require.Len(t, events, 1)
	assert.Equal(t, "generation.done", events[0].Name)
	status, body = c.call(http.MethodGet, "/v3/generations/"+id, keyA, "")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "done", body["generation"].(map[string]any)["status"])

	c.call(http.MethodPost, TestControlPrefix+"/clock/advance", keyA, `{"duration": "24h"}`)
	status, body = c.call(http.MethodGet, "/v3/generations/"+id, keyA, "")
	assert.Equal(t, http.StatusNotFound, status, "expired 24 h after creation")
	assert.Equal(t, "not_found", code(t, body))

	// A signed upload URL lives 15 minutes.
	status, body = c.call(http.MethodPost, "/v3/files/upload-url", keyA, `{"bytes": 3, "contentType": "text/plain"}`)
	require.Equal(t, http.StatusOK, status, body)
	c.call(http.MethodPost, TestControlPrefix+"/clock/advance", keyA, `{"seconds": 901}`)
	req, err := http.NewRequest(http.MethodPut, body["uploadUrl"].(string), strings.NewReader("abc"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// createImage submits an image generation as key and returns its id.
func (c *tcHarness) createImage(key string) string {
	c.t.Helper()
	status, body := c.call(http.MethodPost, "/v3/generations", key, `{"feature":"image/generation","args":{"prompt":"p"}}`)
	require.Equal(c.t, http.StatusOK, status, body)
	return body["generation"].(map[string]any)["id"].(string)
}

func TestTestControlClockNeedsAnAdvanceableClock(t *testing.T) {
	s := New(WithProject(keyA, 1))
	defer s.Close()
	ts := httptest.NewServer(s.TestControl())
	defer ts.Close()
	c := &tcHarness{harness: &harness{t: t, ts: ts}, url: ts.URL, spec: testControlSpec(t)}
	status, body := c.call(http.MethodPost, TestControlPrefix+"/clock/advance", keyA, `{"seconds": 1}`)
	assert.Equal(t, http.StatusNotImplemented, status)
	assert.Equal(t, "unavailable", code(t, body))
	status, _ = c.call(http.MethodGet, TestControlPrefix+"/clock", keyA, "")
	assert.Equal(t, http.StatusOK, status, "the wall clock can still be read")

	// Likewise faults: readable as none, not settable without an injector.
	status, body = c.call(http.MethodGet, TestControlPrefix+"/faults", keyA, "")
	assert.Equal(t, http.StatusOK, status)
	assert.EqualValues(t, 0, body["stats"].(map[string]any)["requests"])
	status, body = c.call(http.MethodPut, TestControlPrefix+"/faults", keyA, `{"httpStatus": 1}`)
	assert.Equal(t, http.StatusNotImplemented, status)
	assert.Equal(t, "unavailable", code(t, body))
}

func TestTestControlBalance(t *testing.T) {
	c := newTCHarness(t)
	status, body := c.call(http.MethodGet, TestControlPrefix+"/balance", keyA, "")
	require.Equal(t, http.StatusOK, status)
	assert.EqualValues(t, 100, body["balance"])

	status, body = c.call(http.MethodPut, TestControlPrefix+"/balance", keyA, `{"balance": 0.03}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.EqualValues(t, 0.03, body["balance"])
	assert.Equal(t, 0.03, c.srv.Balance(keyA))
	assert.Equal(t, 100.0, c.srv.Balance(keyB), "only the caller's project")
	// The service then refuses what the balance cannot pay (an image costs 0.04).
	status, _ = c.call(http.MethodPost, "/v3/generations", keyA, `{"feature":"image/generation","args":{"prompt":"p"}}`)
	assert.Equal(t, http.StatusPaymentRequired, status)

	for _, bad := range []string{`{}`, `{"balance": -1}`, `{"balance": "5"}`, `{"balance": null}`, `{"balance": 1e10}`, `{"usd": 5}`} {
		status, body := c.call(http.MethodPut, TestControlPrefix+"/balance", keyA, bad)
		assert.Equal(t, http.StatusBadRequest, status, bad)
		assert.Equal(t, "invalid_argument", code(t, body), bad)
	}
	assert.Equal(t, 0.03, c.srv.Balance(keyA))
}

func TestTestControlRotatesTheWebhookSecret(t *testing.T) {
	got := make(chan http.Header, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Clone():
		default:
		}
	}))
	defer receiver.Close()
	c := newTCHarness(t, WithAllowHTTPWebhooks())
	old, _ := c.srv.Project(keyA)

	status, body := c.call(http.MethodPost, TestControlPrefix+"/webhook-secret/rotate", keyA, "")
	require.Equal(t, http.StatusOK, status, body)
	secret := body["webhookSecret"].(string)
	assert.True(t, strings.HasPrefix(secret, "whsec_"))
	assert.NotEqual(t, old.WebhookSecret, secret)
	assert.Equal(t, old.WebhookSecret, body["previousSecret"])
	assert.Equal(t, testStart.Add(24*time.Hour).Format(time.RFC3339Nano), body["previousValidUntil"])
	assert.Equal(t, []string{secret, old.WebhookSecret}, c.srv.WebhookSecrets(keyA))
	other, _ := c.srv.Project(keyB)
	assert.Equal(t, []string{other.WebhookSecret}, c.srv.WebhookSecrets(keyB), "only the caller's project")

	status, body = c.call(http.MethodPost, "/v3/generations", keyA,
		`{"feature":"image/generation","args":{"prompt":"p"},"webhookUrl":"`+receiver.URL+`/hook"}`)
	require.Equal(t, http.StatusOK, status, body)
	c.call(http.MethodPost, TestControlPrefix+"/clock/advance", keyA, `{"duration": "5m"}`)
	select {
	case hdr := <-got:
		entries := strings.Fields(hdr.Get(webhook.HeaderSignature))
		assert.Len(t, entries, 2, "both secrets sign during the overlap")
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery")
	}
}

func TestTestControlRetiresAVoice(t *testing.T) {
	c := newTCHarness(t)
	v := catalog.Voices()[0]
	status, body := c.call(http.MethodGet, "/v3/voices/"+v.ID, keyA, "")
	require.Equal(t, http.StatusOK, status, body)

	status, body = c.call(http.MethodPost, TestControlPrefix+"/voices/"+v.Slug+"/retire", keyA, "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, map[string]any{"id": v.ID, "slug": v.Slug}, body)
	status, body = c.call(http.MethodGet, "/v3/voices/"+v.ID, keyB, "")
	assert.Equal(t, http.StatusNotFound, status, "retired for every project")
	assert.Equal(t, "not_found", code(t, body))

	for _, ref := range []string{v.ID, "no-such-voice"} {
		status, body = c.call(http.MethodPost, TestControlPrefix+"/voices/"+ref+"/retire", keyA, "")
		assert.Equal(t, http.StatusNotFound, status, ref)
		assert.Equal(t, "not_found", code(t, body))
	}
}

func TestTestControlFaults(t *testing.T) {
	c := newTCHarness(t)
	status, body := c.call(http.MethodGet, TestControlPrefix+"/faults", keyA, "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, map[string]any{
		"seed": 0.0, "renderError": 0.0, "renderTimeout": 0.0, "renderFeatures": []any{},
		"httpStatus": 0.0, "statuses": []any{}, "retryAfter": "0s", "dropBefore": 0.0, "dropAfter": 0.0,
		"latency": "0s", "paths": []any{}, "methods": []any{},
	}, body["config"])

	status, body = c.call(http.MethodPut, TestControlPrefix+"/faults", keyA,
		`{"seed": 7, "httpStatus": 1, "statuses": [429], "retryAfter": "3s", "paths": ["/v3/pricing"]}`)
	require.Equal(t, http.StatusOK, status, body)
	cfg := body["config"].(map[string]any)
	assert.EqualValues(t, 7, cfg["seed"])
	assert.Equal(t, []any{429.0}, cfg["statuses"])
	assert.Equal(t, "3s", cfg["retryAfter"])
	assert.Equal(t, fault.Config{Seed: 7, HTTPStatus: 1, Statuses: []int{429}, RetryAfter: 3 * time.Second,
		Paths: []string{"/v3/pricing"}}, c.srv.Faults().Config())

	status, _, _ = c.raw(http.MethodGet, c.url+"/v3/pricing", keyA, "", nil)
	assert.Equal(t, http.StatusTooManyRequests, status)
	status, body = c.call(http.MethodGet, TestControlPrefix+"/faults", keyA, "")
	require.Equal(t, http.StatusOK, status, "test control is never faulted")
	assert.EqualValues(t, 1, body["stats"].(map[string]any)["replaced"])

	status, body = c.call(http.MethodPut, TestControlPrefix+"/faults", keyA, `{}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.EqualValues(t, 1, body["stats"].(map[string]any)["replaced"], "counts carry on")
	status, _, _ = c.raw(http.MethodGet, c.url+"/v3/pricing", keyA, "", nil)
	assert.Equal(t, http.StatusOK, status, "{} heals the server")

	for _, bad := range []string{`{"httpStatus": 2}`, `{"httpStatus": 0.6, "dropAfter": 0.6}`, `{"statuses": [302]}`,
		`{"latency": "soon"}`, `{"retryAfter": "-1s"}`, `{"paths": ["v3"]}`, `{"rate": 1}`, ``} {
		status, body := c.call(http.MethodPut, TestControlPrefix+"/faults", keyA, bad)
		assert.Equal(t, http.StatusBadRequest, status, bad)
		assert.Equal(t, "invalid_argument", code(t, body), bad)
		assert.NotContains(t, body["error"].(map[string]any)["message"], "\n")
	}
	assert.Equal(t, 0.0, c.srv.Faults().Config().HTTPStatus, "refused configurations change nothing")
}

func TestTestControlBodyCap(t *testing.T) {
	c := newTCHarness(t)
	big := `{"methods": ["` + strings.Repeat("A", maxTestControlBody) + `"]}`
	status, body := c.call(http.MethodPut, TestControlPrefix+"/faults", keyA, big)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_argument", code(t, body))
}

func TestOffsetClock(t *testing.T) {
	var _ AdvanceableClock = (*OffsetClock)(nil)
	var _ AdvanceableClock = (*FakeClock)(nil)

	var zero OffsetClock
	assert.WithinDuration(t, time.Now(), zero.Now(), time.Second, "the zero value shows real time")
	c := NewOffsetClock()
	done := make(chan struct{})
	for range 10 {
		go func() {
			defer func() { done <- struct{}{} }()
			c.Advance(time.Hour)
			_ = c.Now()
		}()
	}
	for range 10 {
		<-done
	}
	assert.Equal(t, 10*time.Hour, c.Offset())
	assert.WithinDuration(t, time.Now().Add(10*time.Hour), c.Now(), time.Second)
	before := c.Now()
	time.Sleep(20 * time.Millisecond)
	assert.Greater(t, c.Now().Sub(before), 10*time.Millisecond, "it runs in real time")
}
