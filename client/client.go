package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/api"
)

// Version is the version of this module, sent in the User-Agent header as
// "mediagen-go/" + Version.
const Version = "0.3.0"

// Environment variables [New] reads when the matching argument or option is
// not given.
const (
	EnvAPIKey  = "MEDIAGEN_API_KEY"
	EnvBaseURL = "MEDIAGEN_BASE_URL"
)

// maxResponseBody caps how much of a successful answer is read; the largest
// legitimate answer (a page of 100 generations) is far below it.
const maxResponseBody = 32 << 20

// Client talks to the service on behalf of one project. It is safe for
// concurrent use; create one and share it. A Client remembers which
// generations it has handed out, which is what lets billing-safe retries
// tell its own generations from others: see [Client.CreateGeneration].
type Client struct {
	apiKey   string
	auth     []string    // the Authorization header's value, shared by every request
	baseURL  baseURL     // the service address, parsed once
	base     *config     // New's options, resolved
	api      *api.Client // requests retried by the billing-safe policy
	once     *api.Client // requests sent at most once (multipart upload)
	claims   *claims
	searches *searchLocks
	scans    scans // listings shared by searches

	holder      string          // names this client in the journal
	calls       atomic.Uint64   // numbers its keyed calls
	lastCleanup atomic.Int64    // unix ns of its last journal cleanup
	memJournal  journal.Journal // the journal of a client without WithJournal
	prices      priceCache      // for the estimate a keyed call records
}

// config is a resolved set of options: the client's, or a call's on top.
type config struct {
	s       settings
	api     *http.Client          // API attempts: timeout and middleware
	bulk    *http.Client          // multipart uploads to the API: transfer timeout and middleware
	storage *http.Client          // storage attempts: transfer timeout and middleware
	rc      *retryablehttp.Client // retries API attempts

	userAgent []string // the User-Agent header's value, shared by every request
}

// New returns a client for the project of apiKey. An empty apiKey is read
// from MEDIAGEN_API_KEY; the base URL comes from [WithBaseURL] or else
// MEDIAGEN_BASE_URL. New fails with [ErrNoAPIKey] or [ErrNoBaseURL] when
// either is missing, and with a descriptive error when an option is invalid.
// It makes no request.
func New(apiKey string, opts ...Option) (*Client, error) {
	s := defaultSettings()
	if err := s.apply(opts); err != nil {
		return nil, err
	}
	if apiKey == "" {
		apiKey = os.Getenv(EnvAPIKey)
	}
	if apiKey == "" {
		return nil, ErrNoAPIKey
	}
	if s.baseURL == "" {
		s.baseURL = os.Getenv(EnvBaseURL)
	}
	if s.baseURL == "" {
		return nil, ErrNoBaseURL
	}
	base, err := normalizeBaseURL(s.baseURL)
	if err != nil {
		return nil, err
	}
	if s.httpClient == nil {
		s.httpClient = &http.Client{}
	}
	if t := s.httpClient.Timeout; t > 0 {
		if !s.timeoutSet {
			s.timeout = t
		}
		if !s.transferSet {
			s.transfer = t
		}
	}
	c := &Client{apiKey: apiKey, auth: []string{apiKey}, claims: newClaims(), searches: newSearchLocks(),
		holder: newHolder(), memJournal: journal.NewMemory()}
	if c.baseURL, err = newBaseURL(base); err != nil {
		return nil, fmt.Errorf("mediagen: base URL: %w", err)
	}
	c.base = c.resolve(s)
	auth := api.WithRequestEditorFn(c.authorize)
	if c.api, err = api.NewClient(base, api.WithHTTPClient(retryDoer{c}), auth); err != nil {
		return nil, fmt.Errorf("mediagen: %w", err)
	}
	if c.once, err = api.NewClient(base, api.WithHTTPClient(onceDoer{c}), auth); err != nil {
		return nil, fmt.Errorf("mediagen: %w", err)
	}
	return c, nil
}

// RetryPolicy returns the client's retry policy, as [WithRetryPolicy] and
// the other retry options set it.
func (c *Client) RetryPolicy() RetryPolicy { return c.base.s.retry }

// resolve builds the HTTP clients settings s asks for.
func (c *Client) resolve(s settings) *config {
	cfg := &config{s: s, userAgent: []string{s.userAgent}}
	transport := s.httpClient.Transport
	if len(s.middleware) > 0 {
		transport = &middlewareTransport{next: transport, mw: s.middleware}
	}
	// The API's per-attempt bound is a deadline on the attempt's context, not
	// http.Client.Timeout, which starts a goroutine for every request.
	apiTransport := transport
	if s.timeout > 0 {
		apiTransport = &attemptTimeout{next: transport, d: s.timeout}
	}
	cfg.api = &http.Client{Transport: apiTransport, CheckRedirect: s.httpClient.CheckRedirect, Jar: s.httpClient.Jar}
	// A multipart upload carries files to the API: it is a transfer.
	cfg.bulk = &http.Client{Transport: transport, CheckRedirect: s.httpClient.CheckRedirect, Jar: s.httpClient.Jar, Timeout: s.transfer}
	// No jar for storage: cookies of the API host must not travel there.
	cfg.storage = &http.Client{Transport: transport, CheckRedirect: s.httpClient.CheckRedirect, Timeout: s.transfer}
	p := retryPolicy{waitMax: s.retry.WaitMax, clock: s.clock}
	cfg.rc = &retryablehttp.Client{
		HTTPClient:     cfg.api,
		RetryWaitMin:   s.retry.WaitMin,
		RetryWaitMax:   s.retry.WaitMax,
		RetryMax:       s.retry.MaxRetries,
		CheckRetry:     p.CheckRetry,
		Backoff:        p.Backoff,
		ErrorHandler:   retryablehttp.PassthroughErrorHandler,
		RequestLogHook: c.beforeAttempt,
	}
	return cfg
}

// configure returns the configuration of a call with opts: the client's own
// when there are none, so a call without options allocates nothing for them.
func (c *Client) configure(opts []Option) (*config, error) {
	if len(opts) == 0 {
		return c.base, nil
	}
	s := c.base.s
	s.perCall = true
	if err := s.apply(opts); err != nil {
		return nil, err
	}
	return c.resolve(s), nil
}

type configKey struct{}

// start begins a call with opts: it resolves them and, when they differ
// from the client's, puts them in the context the requests carry.
func (c *Client) start(ctx context.Context, opts []Option) (context.Context, *config, error) {
	cfg, err := c.configure(opts)
	if err != nil {
		return ctx, nil, err
	}
	if cfg != c.base {
		ctx = context.WithValue(ctx, configKey{}, cfg)
	}
	return ctx, cfg, nil
}

// configOf returns the configuration a request's context carries.
func (c *Client) configOf(ctx context.Context) *config {
	if cfg, ok := ctx.Value(configKey{}).(*config); ok {
		return cfg
	}
	return c.base
}

// authorize adds the key, User-Agent and the caller's headers to every API
// request the generated client builds.
func (c *Client) authorize(ctx context.Context, req *http.Request) error {
	c.setHeaders(ctx, req)
	return nil
}

// setHeaders adds the key, User-Agent and the caller's headers to req. The
// key's and User-Agent's values are slices shared by every request and
// never modified: net/http only reads them, and middleware that changes a
// header replaces the slice.
func (c *Client) setHeaders(ctx context.Context, req *http.Request) {
	cfg := c.configOf(ctx)
	for k, vs := range cfg.s.header {
		req.Header[k] = append(req.Header[k], vs...)
	}
	req.Header["Authorization"] = c.auth
	req.Header["User-Agent"] = cfg.userAgent
}

// decode reads an answer: into out on 2xx, or into an error otherwise. When
// ctx ended, ctx.Err() wins over whatever the transport made of it.
func (c *Client) decode(ctx context.Context, resp *http.Response, err error, out any) error {
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("mediagen: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return newAPIError(resp, body, c.apiKey)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
		return nil
	}
	// Decoded as it streams in: no copy of the whole body first. What
	// follows is drained, up to 64 KiB, so the connection is reused. A body
	// of a known length within that needs no limit of its own.
	var body io.Reader = resp.Body
	var limited *io.LimitedReader
	if resp.ContentLength < 0 || resp.ContentLength > 64<<10 {
		limited = &io.LimitedReader{R: resp.Body, N: maxResponseBody}
		body = limited
	}
	if err := json.NewDecoder(body).Decode(out); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return newBodyError(resp, err)
	}
	if limited != nil {
		limited.N = 64 << 10
	}
	_, _ = io.Copy(io.Discard, body)
	return nil
}

// bodyError is a 2xx answer that could not be read to the end or decoded. For
// a charging request it is ambiguous: the service did accept it.
type bodyError struct {
	method, path string
	err          error
}

func newBodyError(resp *http.Response, err error) *bodyError {
	e := &bodyError{err: err}
	if resp.Request != nil {
		e.method, e.path = resp.Request.Method, resp.Request.URL.Path
	}
	return e
}

func (e *bodyError) Error() string {
	return fmt.Sprintf("mediagen: %s %s: reading answer: %v", e.method, e.path, e.err)
}

func (e *bodyError) Unwrap() error { return e.err }

// errNoID is the failure of a 2xx answer to a charging request that names no
// row: the service accepted something the caller could not follow.
var errNoID = errors.New("the answer carries no id")
