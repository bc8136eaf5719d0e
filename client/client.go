package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/mediagen/mediagen-go/internal/api"
)

// Version is the version of this module, sent in the User-Agent header as
// "mediagen-go/" + Version.
const Version = "0.1.0"

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
	apiKey     string
	userAgent  string
	logger     *slog.Logger
	http       *http.Client // the caller's client, for calls that must not be retried
	policy     retryPolicy
	maxRetries int
	api        *api.Client // retried calls
	once       *api.Client // calls sent at most once (multipart upload)
	claims     *claims
	searches   *searchLocks
}

// New returns a client for the project of apiKey. An empty apiKey is read
// from MEDIAGEN_API_KEY; the base URL comes from [WithBaseURL] or else
// MEDIAGEN_BASE_URL. New fails with [ErrNoAPIKey] or [ErrNoBaseURL] when
// either is missing, and with a descriptive error when an option is invalid.
// It makes no request.
func New(apiKey string, opts ...Option) (*Client, error) {
	s := settings{
		maxRetries:   DefaultMaxRetries,
		retryWaitMin: DefaultRetryWaitMin,
		retryWaitMax: DefaultRetryWaitMax,
		userAgent:    "mediagen-go/" + Version,
	}
	var errs []error
	for _, o := range opts {
		if err := o(&s); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
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
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}

	c := &Client{
		apiKey:     apiKey,
		userAgent:  s.userAgent,
		logger:     s.logger,
		http:       s.httpClient,
		policy:     retryPolicy{waitMin: s.retryWaitMin, waitMax: s.retryWaitMax},
		claims:     newClaims(),
		searches:   newSearchLocks(),
		maxRetries: s.maxRetries,
	}
	rc := &retryablehttp.Client{
		HTTPClient:     s.httpClient,
		RetryWaitMin:   s.retryWaitMin,
		RetryWaitMax:   s.retryWaitMax,
		RetryMax:       s.maxRetries,
		CheckRetry:     c.policy.CheckRetry,
		Backoff:        c.policy.Backoff,
		ErrorHandler:   retryablehttp.PassthroughErrorHandler,
		RequestLogHook: c.beforeAttempt,
	}
	auth := api.WithRequestEditorFn(c.authorize)
	if c.api, err = api.NewClient(base, api.WithHTTPClient(&retryDoer{rc: rc, logger: c.logger}), auth); err != nil {
		return nil, fmt.Errorf("mediagen: %w", err)
	}
	if c.once, err = api.NewClient(base, api.WithHTTPClient(&onceDoer{hc: s.httpClient, logger: c.logger}), auth); err != nil {
		return nil, fmt.Errorf("mediagen: %w", err)
	}
	return c, nil
}

// StorageClient returns an HTTP client for the storage URLs the service hands
// out (signed upload URLs, outputs, previews). It shares the transport of
// the client given to [WithHTTPClient] but never sends the API key, and it
// does not retry: a storage PUT streams its body, which cannot be replayed.
func (c *Client) StorageClient() *http.Client {
	return &http.Client{
		Transport:     c.http.Transport,
		CheckRedirect: c.http.CheckRedirect,
		Timeout:       c.http.Timeout,
	}
}

// authorize adds the key and User-Agent to every API request.
func (c *Client) authorize(_ context.Context, req *http.Request) error {
	req.Header.Set("Authorization", c.apiKey)
	req.Header.Set("User-Agent", c.userAgent)
	return nil
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
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return newBodyError(resp, err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return newBodyError(resp, err)
	}
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
