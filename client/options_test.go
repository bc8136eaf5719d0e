package client_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

func TestNewErrors(t *testing.T) {
	t.Setenv(client.EnvAPIKey, "")
	t.Setenv(client.EnvBaseURL, "")
	_, err := client.New("", client.WithBaseURL("https://api.example.com"))
	assert.ErrorIs(t, err, client.ErrNoAPIKey)
	assert.Contains(t, err.Error(), client.EnvAPIKey)
	_, err = client.New("mg_key_123456")
	assert.ErrorIs(t, err, client.ErrNoBaseURL)
	assert.Contains(t, err.Error(), client.EnvBaseURL)

	for name, opt := range map[string]client.Option{
		"relative URL":       client.WithBaseURL("api.example.com"),
		"other scheme":       client.WithBaseURL("ftp://api.example.com"),
		"credentials in URL": client.WithBaseURL("https://user:pw@api.example.com"),
		"nil HTTP client":    client.WithHTTPClient(nil),
		"negative retries":   client.WithMaxRetries(-1),
		"min above max":      client.WithRetryWait(time.Second, time.Millisecond),
		"line break in UA":   client.WithUserAgent("x\r\nAuthorization: y"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := client.New("mg_key_123456", client.WithBaseURL("https://api.example.com"), opt)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "mg_key_123456")
		})
	}
}

func TestBaseURLErrorsDoNotQuoteCredentials(t *testing.T) {
	for _, u := range []string{
		"ftp://user:s3cretpass@api.example.com",
		"https://user:s3cretpass@api.example.com/%zz",
		"user:s3cretpass@api.example.com",
	} {
		_, err := client.New("mg_key_123456", client.WithBaseURL(u))
		require.Error(t, err, u)
		assert.NotContains(t, err.Error(), "s3cretpass", u)
	}
}

func TestRetryPolicyValue(t *testing.T) {
	c, err := client.New("mg_key_123456", client.WithBaseURL("https://api.example.com"))
	require.NoError(t, err)
	assert.Equal(t, client.DefaultRetryPolicy(), c.RetryPolicy())
	assert.Equal(t, client.RetryPolicy{MaxRetries: 4, WaitMin: 500 * time.Millisecond, WaitMax: 10 * time.Second}, client.DefaultRetryPolicy())

	p := client.RetryPolicy{MaxRetries: 2, WaitMin: time.Second, WaitMax: 3 * time.Second}
	c, err = client.New("mg_key_123456", client.WithBaseURL("https://api.example.com"), client.WithRetryPolicy(p), client.WithMaxRetries(7))
	require.NoError(t, err)
	p.MaxRetries = 7
	assert.Equal(t, p, c.RetryPolicy(), "options apply in order")

	for name, bad := range map[string]client.RetryPolicy{
		"negative retries": {MaxRetries: -1},
		"min above max":    {WaitMin: time.Second, WaitMax: time.Millisecond},
		"negative min":     {WaitMin: -time.Second},
	} {
		_, err := client.New("mg_key_123456", client.WithBaseURL("https://api.example.com"), client.WithRetryPolicy(bad))
		assert.ErrorContains(t, err, "WithRetryPolicy", name)
	}
}

func TestPerCallHeader(t *testing.T) {
	srv, _, ctx := setup(t)
	c, rec := recorded(t, srv, nil, client.WithHeader("X-Team", "media"))
	g := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "a gull"})
	path := "/v3/generations/" + g.ID

	_, err := c.GetGeneration(ctx, g.ID, client.WithHeader("x-request-tag", "first"), client.WithHeader("X-Team", "stills"))
	require.NoError(t, err)
	_, err = c.GetGeneration(ctx, g.ID)
	require.NoError(t, err)
	require.NoError(t, c.Download(ctx, g.Output.URL(), io.Discard, client.WithHeader("X-Request-Tag", "download")))

	gets := rec.requests(path)
	require.Len(t, gets, 3, "one GET in doneGeneration, then two")
	tagged, plain := gets[1].Header, gets[2].Header
	assert.Equal(t, []string{"first"}, tagged.Values("X-Request-Tag"), "a per-call header reaches the service")
	assert.Equal(t, []string{"media", "stills"}, tagged.Values("X-Team"), "added to the client's own")
	assert.Empty(t, plain.Values("X-Request-Tag"), "and is gone on the next call")
	assert.Equal(t, []string{"media"}, plain.Values("X-Team"), "the client's headers are unchanged")
	assert.Equal(t, srv.APIKey(), plain.Get("Authorization"))

	storage := rec.requests("/storage/")
	require.Len(t, storage, 1)
	assert.Empty(t, storage[0].Header.Values("X-Request-Tag"), "extra headers are never sent to storage")
	assert.Empty(t, storage[0].Header.Values("X-Team"))
	assert.Empty(t, storage[0].Header.Values("Authorization"))
}

func TestWithHeaderRefusesInvalidHeaders(t *testing.T) {
	srv, _, ctx := setup(t)
	c, rec := recorded(t, srv, nil)
	for name, tc := range map[string]struct {
		opt  client.Option
		says string
	}{
		"Authorization":        {client.WithHeader("Authorization", "Bearer s3cret-value"), "WithHeader(Authorization)"},
		"authorization":        {client.WithHeader("authorization", "s3cret-value"), "WithHeader(Authorization)"},
		"User-Agent":           {client.WithHeader("User-Agent", "other/1.0"), "WithUserAgent"},
		"Content-Type":         {client.WithHeader("content-type", "text/plain"), "WithHeader(Content-Type)"},
		"Content-Length":       {client.WithHeader("Content-Length", "12"), "WithHeader(Content-Length)"},
		"Host":                 {client.WithHeader("Host", "other.example"), "WithHeader(Host)"},
		"space in name":        {client.WithHeader("X Tag", "v"), "not a header name"},
		"colon in name":        {client.WithHeader("X-Tag:", "v"), "not a header name"},
		"empty name":           {client.WithHeader("", "v"), "not a header name"},
		"line break in value":  {client.WithHeader("X-Tag", "v\r\nAuthorization: s3cret-value"), "line break"},
		"NUL in value":         {client.WithHeader("X-Tag", "v\x00"), "line break"},
		"non-ASCII in name":    {client.WithHeader("X-Tàg", "v"), "not a header name"},
		"control char in name": {client.WithHeader("X-\tTag", "v"), "not a header name"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := client.New(srv.APIKey(), client.WithBaseURL(srv.URL()), tc.opt)
			require.ErrorContains(t, err, tc.says, "refused by New")
			_, err = c.Pricing(ctx, tc.opt)
			require.ErrorContains(t, err, tc.says, "refused per call")
			assert.NotContains(t, err.Error(), "s3cret-value", "the value is not quoted")
		})
	}
	assert.Empty(t, rec.requests("/"), "a call with an invalid option sends nothing")
}

func TestWithResponseInto(t *testing.T) {
	srv, _, ctx := setup(t)
	// The first GET of a generation fails with 503 and is retried.
	c, _ := recorded(t, srv, func(r *http.Request, n int) (*http.Response, error) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v3/generations/gen_") && n == 0 {
			return synthetic(r, http.StatusServiceUnavailable, "", map[string]string{"X-Attempt": "first"}), nil
		}
		return nil, nil
	})
	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a heron"})
	require.NoError(t, err)

	var resp *http.Response
	got, err := c.GetGeneration(ctx, g.ID, client.WithResponseInto(&resp))
	require.NoError(t, err)
	require.NotNil(t, resp)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the last attempt's answer")
	assert.Empty(t, resp.Header.Get("X-Attempt"))
	assert.Contains(t, resp.Header.Get("Content-Type"), "application/json")
	assert.Equal(t, srv.Now().UTC().Format(http.TimeFormat), resp.Header.Get("Date"), "headers as the service sent them")
	assert.Equal(t, "/v3/generations/"+got.ID, resp.Request.URL.Path)
	assert.NotContains(t, resp.Request.URL.RawQuery, srv.APIKey())

	var missing *http.Response
	_, err = c.GetGeneration(ctx, "gen_missing", client.WithResponseInto(&missing))
	require.ErrorIs(t, err, client.ErrNotFound)
	require.NotNil(t, missing, "an error answer is captured too")
	assert.Equal(t, http.StatusNotFound, missing.StatusCode)

	var created *http.Response
	_, err = c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a crane"}, client.WithResponseInto(&created))
	require.NoError(t, err)
	require.NotNil(t, created)
	assert.Equal(t, http.StatusOK, created.StatusCode)
	assert.Equal(t, http.MethodPost, created.Request.Method)

	// A call that received no answer leaves it alone.
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	unreachable, err := client.New(srv.APIKey(), client.WithBaseURL(down.URL), client.WithMaxRetries(0))
	require.NoError(t, err)
	kept := resp
	_, err = unreachable.Pricing(ctx, client.WithResponseInto(&resp))
	require.Error(t, err)
	assert.Same(t, kept, resp)

	// Downloads capture storage's answer, errors included.
	done := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "a stork"})
	var fetched *http.Response
	require.NoError(t, c.Download(ctx, done.Output.URL(), io.Discard, client.WithResponseInto(&fetched)))
	require.NotNil(t, fetched)
	assert.Equal(t, http.StatusOK, fetched.StatusCode)
	assert.Equal(t, done.Output.MIME, fetched.Header.Get("Content-Type"))
	assert.Equal(t, http.MethodGet, fetched.Request.Method)
	var saved *http.Response
	_, err = c.SaveOutput(ctx, done, t.TempDir(), client.WithResponseInto(&saved))
	require.NoError(t, err)
	require.NotNil(t, saved)
	assert.Equal(t, http.StatusOK, saved.StatusCode)
	require.NoError(t, c.DeleteGeneration(ctx, done.ID))
	var gone *http.Response
	require.ErrorIs(t, c.Download(ctx, done.Output.URL(), io.Discard, client.WithResponseInto(&gone)), client.ErrNotFound)
	require.NotNil(t, gone)
	assert.Equal(t, http.StatusNotFound, gone.StatusCode)

	_, err = client.New(srv.APIKey(), client.WithBaseURL(srv.URL()), client.WithResponseInto(&resp))
	assert.ErrorContains(t, err, "WithResponseInto applies to one call")
	_, err = c.Pricing(ctx, client.WithResponseInto(nil))
	assert.ErrorContains(t, err, "nil destination")
}

func TestPerCallMaxRetries(t *testing.T) {
	srv, _, ctx := setup(t)
	c, rec := recorded(t, srv, func(r *http.Request, _ int) (*http.Response, error) {
		if r.URL.Path == "/v3/pricing" {
			return synthetic(r, http.StatusServiceUnavailable, "", nil), nil
		}
		return nil, nil
	})
	attempts := func(opts ...client.Option) int {
		before := rec.count(http.MethodGet, "/v3/pricing")
		_, err := c.Pricing(ctx, opts...)
		var apiErr *client.APIError
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, http.StatusServiceUnavailable, apiErr.StatusCode)
		return rec.count(http.MethodGet, "/v3/pricing") - before
	}
	assert.Equal(t, 1, attempts(client.WithMaxRetries(0)), "no retry for this call")
	assert.Equal(t, 5, attempts(), "the client's policy retries 4 times")
	assert.Equal(t, 2, attempts(client.WithRetryPolicy(client.RetryPolicy{MaxRetries: 1, WaitMax: time.Millisecond})))
	assert.Equal(t, client.DefaultRetryPolicy().MaxRetries, c.RetryPolicy().MaxRetries, "per-call options leave the client alone")
}

func TestPerCallTimeoutEndsASlowAttempt(t *testing.T) {
	srv, _, ctx := setup(t)
	// The first attempt of each path hangs until its request is given up.
	hang := func(r *http.Request, n int) (*http.Response, error) {
		if n == 0 && (strings.HasPrefix(r.URL.Path, "/v3/generations/") || strings.HasPrefix(r.URL.Path, "/storage/")) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		}
		return nil, nil
	}
	c, rec := recorded(t, srv, hang)
	created, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a wren"})
	require.NoError(t, err)
	srv.Advance(10 * time.Minute)

	const timeout = 250 * time.Millisecond
	start := time.Now()
	g, err := c.GetGeneration(ctx, created.ID, client.WithTimeout(timeout))
	require.NoError(t, err, "the retry succeeds")
	assert.Equal(t, mediagen.GenerationStatusDone, g.Status)
	assert.Equal(t, 2, rec.count(http.MethodGet, "/v3/generations/"+g.ID))
	assert.GreaterOrEqual(t, time.Since(start), timeout)
	assert.Less(t, time.Since(start), 5*time.Second, "the slow attempt ended at the per-call timeout, not the default")

	// Transfers have their own per-attempt bound (a voice preview: small,
	// quick to make).
	var buf bytes.Buffer
	require.NoError(t, c.Download(ctx, catalogVoice(t, ctx, c).Preview, &buf, client.WithTransferTimeout(timeout)))
	assert.NotZero(t, buf.Len())
	assert.Len(t, rec.requests("/storage/"), 2)

	// Without a retry the timeout is the call's error; the context is not
	// what ended it.
	slow, _ := recorded(t, srv, func(r *http.Request, _ int) (*http.Response, error) {
		<-r.Context().Done()
		return nil, r.Context().Err()
	})
	_, err = slow.Pricing(ctx, client.WithTimeout(20*time.Millisecond), client.WithMaxRetries(0))
	var netErr net.Error
	require.ErrorAs(t, err, &netErr)
	assert.True(t, netErr.Timeout())
	require.NoError(t, ctx.Err())

	_, err = c.Pricing(ctx, client.WithTimeout(-time.Second))
	assert.ErrorContains(t, err, "WithTimeout")
}

func TestMiddlewareSeesEveryAttempt(t *testing.T) {
	srv, _, ctx := setup(t)
	var mu sync.Mutex
	var outer, inner []string
	logTo := func(log *[]string) client.Middleware {
		return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			resp, err := next(req)
			status := 0
			if resp != nil {
				status = resp.StatusCode
			}
			auth := ""
			if req.Header.Get("Authorization") != "" {
				auth = " auth"
			}
			mu.Lock()
			*log = append(*log, fmt.Sprintf("%s %s %d%s", req.Method, strings.SplitN(req.URL.Path, "/", 3)[1], status, auth))
			mu.Unlock()
			return resp, err
		}
	}
	// The first attempt of every GET of a generation and of every storage
	// download fails with 503; the retries go through.
	c, _ := recorded(t, srv, func(r *http.Request, n int) (*http.Response, error) {
		if r.Method == http.MethodGet && n == 0 && (strings.HasPrefix(r.URL.Path, "/v3/generations/") || strings.HasPrefix(r.URL.Path, "/storage/")) {
			return synthetic(r, http.StatusServiceUnavailable, "", nil), nil
		}
		return nil, nil
	}, client.WithMiddleware(logTo(&outer)))

	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "an owl"})
	require.NoError(t, err)
	srv.Advance(10 * time.Minute)
	g, err = c.GetGeneration(ctx, g.ID, client.WithMiddleware(logTo(&inner)))
	require.NoError(t, err)
	require.NoError(t, c.Download(ctx, g.Output.URL(), io.Discard))

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{
		"POST v3 200 auth",
		"GET v3 503 auth", "GET v3 200 auth", // a retry is an attempt of its own
		"GET storage 503", "GET storage 200", // downloads too, never with the key
	}, outer)
	assert.Equal(t, []string{"GET v3 503 auth", "GET v3 200 auth"}, inner, "per-call middleware sees its call only")

	_, err = c.Pricing(ctx, client.WithMiddleware(nil))
	assert.ErrorContains(t, err, "nil middleware")
}

// TestMiddlewareOrder: the client's middleware is outermost, in the order
// given, and a call's runs inside it.
func TestMiddlewareOrder(t *testing.T) {
	srv, _, ctx := setup(t)
	var order []string
	mark := func(name string) client.Middleware {
		return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			order = append(order, name+" in")
			resp, err := next(req)
			order = append(order, name+" out")
			return resp, err
		}
	}
	c := srv.Client(client.WithMiddleware(mark("a"), mark("b")))
	_, err := c.Pricing(ctx, client.WithMiddleware(mark("call")))
	require.NoError(t, err)
	assert.Equal(t, []string{"a in", "b in", "call in", "call out", "b out", "a out"}, order)
}

// TestNewOnlyOptionsRefusedPerCall: every method takes options, and refuses
// those that configure the client itself before sending anything.
func TestNewOnlyOptionsRefusedPerCall(t *testing.T) {
	srv, _, ctx := setup(t)
	c, rec := recorded(t, srv, nil)
	done := &mediagen.Generation{ID: "gen_1", Status: mediagen.GenerationStatusDone, Output: mediagen.Output{Image: srv.URL() + "/storage/generations/gen_1/image.png", MIME: "image/png"}}
	uncertain := &client.UncertainError{Op: "generation", Args: client.ImageGenerationArgs{Prompt: "p"}}
	uncertainClone := &client.UncertainError{Op: "voice clone", Clone: &client.CloneVoiceParams{Name: "n", Audio: "file_1"}}
	calls := map[string]func(...client.Option) error{
		"CreateGeneration": func(o ...client.Option) error {
			_, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "p"}, o...)
			return err
		},
		"GetGeneration":    func(o ...client.Option) error { _, err := c.GetGeneration(ctx, "gen_1", o...); return err },
		"DeleteGeneration": func(o ...client.Option) error { return c.DeleteGeneration(ctx, "gen_1", o...) },
		"ListGenerations": func(o ...client.Option) error {
			_, err := c.ListGenerations(ctx, client.ListParams{}, o...)
			return err
		},
		"Generations": func(o ...client.Option) error {
			for _, err := range c.Generations(ctx, client.ListParams{}, o...) {
				return err
			}
			return nil
		},
		"FindGeneration": func(o ...client.Option) error { _, err := c.FindGeneration(ctx, uncertain, o...); return err },
		"FindVoiceClone": func(o ...client.Option) error { _, err := c.FindVoiceClone(ctx, uncertainClone, o...); return err },
		"Voices":         func(o ...client.Option) error { _, err := c.Voices(ctx, client.VoiceFilter{}, o...); return err },
		"GetVoice":       func(o ...client.Option) error { _, err := c.GetVoice(ctx, "ava", o...); return err },
		"CloneVoice": func(o ...client.Option) error {
			_, err := c.CloneVoice(ctx, client.CloneVoiceParams{Name: "n", Audio: "file_1"}, o...)
			return err
		},
		"DeleteVoice":     func(o ...client.Option) error { return c.DeleteVoice(ctx, "voice_1", o...) },
		"FavoriteVoice":   func(o ...client.Option) error { return c.FavoriteVoice(ctx, "ava", o...) },
		"UnfavoriteVoice": func(o ...client.Option) error { return c.UnfavoriteVoice(ctx, "ava", o...) },
		"Templates": func(o ...client.Option) error {
			_, err := c.Templates(ctx, client.TemplateFilter{}, o...)
			return err
		},
		"TemplatePrompt": func(o ...client.Option) error { _, err := c.TemplatePrompt(ctx, "tp_1", o...); return err },
		"Pricing":        func(o ...client.Option) error { _, err := c.Pricing(ctx, o...); return err },
		"CreateUploadURL": func(o ...client.Option) error {
			_, err := c.CreateUploadURL(ctx, 10, "image/png", o...)
			return err
		},
		"Download": func(o ...client.Option) error { return c.Download(ctx, done.Output.Image, io.Discard, o...) },
		"SaveOutput": func(o ...client.Option) error {
			_, err := c.SaveOutput(ctx, done, t.TempDir(), o...)
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call(client.WithBaseURL("https://elsewhere.example.com"))
			require.ErrorContains(t, err, "WithBaseURL configures the client; pass it to New, not to a call")
			err = call(client.WithHTTPClient(http.DefaultClient))
			require.ErrorContains(t, err, "WithHTTPClient configures the client")
		})
	}
	assert.Empty(t, rec.requests("/"), "refused before sending")
}
