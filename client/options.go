package client

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Default retry settings; see [WithMaxRetries] and [WithRetryWait].
const (
	DefaultMaxRetries   = 4
	DefaultRetryWaitMin = 500 * time.Millisecond
	DefaultRetryWaitMax = 10 * time.Second
)

// Option configures a [Client] in [New]. An option that gets a bad value
// makes New fail with an error naming it.
type Option func(*settings) error

// settings collects the options before New builds the client.
type settings struct {
	baseURL      string
	httpClient   *http.Client
	maxRetries   int
	retryWaitMin time.Duration
	retryWaitMax time.Duration
	userAgent    string
	logger       *slog.Logger
}

// WithBaseURL sets the service address, for example
// "https://api.example.com" (a trailing "/v3" is accepted and dropped). It
// takes precedence over MEDIAGEN_BASE_URL.
func WithBaseURL(u string) Option {
	return func(s *settings) error {
		s.baseURL = u
		return nil
	}
}

// WithHTTPClient sets the HTTP client whose transport, timeout and redirect
// policy every request uses; retries are layered on top of it. The client's
// Timeout bounds each attempt, not the whole call.
func WithHTTPClient(hc *http.Client) Option {
	return func(s *settings) error {
		if hc == nil {
			return errors.New("mediagen: WithHTTPClient: nil *http.Client")
		}
		s.httpClient = hc
		return nil
	}
}

// WithMaxRetries sets how many times a failed request is retried (default
// [DefaultMaxRetries]); 0 disables retries. For a request that charges, it
// also bounds how often the client submits again after finding that an
// ambiguous attempt created nothing.
func WithMaxRetries(n int) Option {
	return func(s *settings) error {
		if n < 0 {
			return fmt.Errorf("mediagen: WithMaxRetries(%d): negative", n)
		}
		s.maxRetries = n
		return nil
	}
}

// WithRetryWait sets the bounds of the jittered exponential backoff between
// retries (defaults [DefaultRetryWaitMin], [DefaultRetryWaitMax]); the
// steps double from min, so a min of 0 retries without waiting. A
// Retry-After the service sends is honoured when it is at most max; a longer
// one is not waited for: the call returns an [*APIError] carrying it.
func WithRetryWait(min, max time.Duration) Option {
	return func(s *settings) error {
		if min < 0 || max < min {
			return fmt.Errorf("mediagen: WithRetryWait(%s, %s): want 0 <= min <= max", min, max)
		}
		s.retryWaitMin, s.retryWaitMax = min, max
		return nil
	}
}

// WithUserAgent sets the User-Agent header; the default is
// "mediagen-go/" + [Version].
func WithUserAgent(ua string) Option {
	return func(s *settings) error {
		if strings.ContainsAny(ua, "\r\n") {
			return errors.New("mediagen: WithUserAgent: line break in user agent")
		}
		s.userAgent = ua
		return nil
	}
}

// WithLogger logs every request (method, path without query, status,
// duration) at Debug, each retry with its attempt number at Debug, failures
// and 5xx answers at Warn, and the decisions of billing-safe reconciliation
// at Debug. Headers, bodies and the API key are never logged.
func WithLogger(l *slog.Logger) Option {
	return func(s *settings) error {
		s.logger = l
		return nil
	}
}

// normalizeBaseURL checks u and strips a trailing slash and "/v3", as the
// request paths carry the version. Its errors never quote credentials that u
// may carry.
func normalizeBaseURL(u string) (string, error) {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL itself
		}
		return "", fmt.Errorf("mediagen: base URL: %w", err)
	}
	if p.User != nil {
		return "", errors.New("mediagen: base URL must not carry credentials")
	}
	if p.Scheme != "http" && p.Scheme != "https" || p.Host == "" {
		shown := strconv.Quote(u)
		if strings.Contains(u, "@") {
			shown = "(not shown: it may hold credentials)"
		}
		return "", fmt.Errorf("mediagen: base URL %s: want http:// or https:// and a host", shown)
	}
	p.Path = strings.TrimSuffix(strings.TrimSuffix(p.Path, "/"), "/v3")
	p.RawQuery, p.Fragment = "", ""
	return p.String(), nil
}
