package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/retry"
)

// Default per-attempt timeouts; see [WithTimeout] and [WithTransferTimeout].
const (
	DefaultTimeout         = 60 * time.Second // each attempt of an API request
	DefaultTransferTimeout = 10 * time.Minute // each attempt of an upload or a download
)

// Option configures a [Client] in [New], or one call on top of the client's; a bad value fails with an error.
type Option func(*settings) error

// settings is what the options configure.
type settings struct {
	perCall      bool // options are being applied to one call
	shared       bool // ... or checked for many calls (CheckSharedOptions)
	baseURL      string
	httpClient   *http.Client
	retry        RetryPolicy
	timeout      time.Duration // per attempt of an API request; 0 is none
	transfer     time.Duration // per attempt of a storage transfer; 0 is none
	maxDownload  int64         // bytes of one downloaded asset
	timeoutSet   bool
	transferSet  bool
	userAgent    string
	logger       *slog.Logger
	header       http.Header // shared, cloned on write
	responseInto **http.Response
	webhookURL   string
	middleware   []Middleware // shared, clipped on append
	clock        Clock
	journal      journal.Journal
	hold         time.Duration // of a key in the journal
	idemKey      string        // one call's idempotency key

	tracerProvider trace.TracerProvider // nil: the global one
	meterProvider  metric.MeterProvider // nil: the global one
}

func defaultSettings() settings {
	return settings{
		retry:       DefaultRetryPolicy(),
		timeout:     DefaultTimeout,
		transfer:    DefaultTransferTimeout,
		userAgent:   "mediagen-go/" + Version,
		logger:      slog.New(slog.DiscardHandler),
		clock:       retry.Wall,
		hold:        DefaultJournalHold,
		maxDownload: DefaultMaxDownload,
	}
}

// apply runs opts over s and joins their errors.
func (s *settings) apply(opts []Option) error {
	var errs []error
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// CheckOptions reports the errors opts would fail a call with, without making one: for packages that carry
// client options to their requests (poll, upload, batch), to fail before sending anything.
func CheckOptions(opts ...Option) error { return check(false, opts) }

// CheckSharedOptions is [CheckOptions] for options applied to many calls (package batch): it also refuses
// those of one call, [WithIdempotencyKey] and [WithResponseInto].
func CheckSharedOptions(opts ...Option) error { return check(true, opts) }

func check(shared bool, opts []Option) error {
	s := defaultSettings()
	s.perCall, s.shared = true, shared
	return s.apply(opts)
}

// newOnly makes the option set fail when passed to a call.
func newOnly(name string, set func(*settings) error) Option {
	return func(s *settings) error {
		if s.perCall {
			return fmt.Errorf("mediagen: %s configures the client; pass it to New, not to a call", name)
		}
		return set(s)
	}
}

// oneCall makes the option set fail given to New or to options of many calls, which would share its state.
func oneCall(name string, set func(*settings) error) Option {
	return func(s *settings) error {
		if !s.perCall || s.shared {
			return fmt.Errorf("mediagen: %s applies to one call; "+
				"pass it to the call, not to New or to options shared by many calls", name)
		}
		return set(s)
	}
}

// nonNil stores v in *dst, or fails with "mediagen: "+msg when v is nil.
func nonNil[T comparable](v T, msg string, dst *T) error {
	var zero T
	if v == zero {
		return errors.New("mediagen: " + msg)
	}
	*dst = v
	return nil
}

// nonNegative returns an option that calls set unless v is negative.
func nonNegative[T int | time.Duration](name string, v T, set func(*settings)) Option {
	return func(s *settings) error {
		if v < 0 {
			return fmt.Errorf("mediagen: %s(%v): negative", name, v)
		}
		set(s)
		return nil
	}
}

// RetryPolicy says how often and how patiently a failed request is retried; which failures are retried is
// the package's billing-safe rule, which no setting loosens.
type RetryPolicy struct {
	// MaxRetries is how many times a failed request is sent again; 0 disables retries. For a charging
	// request it also bounds how often the client submits again once an ambiguous attempt created nothing.
	MaxRetries int
	// WaitMin is the first backoff step; steps double up to WaitMax, with jitter. A Retry-After of at
	// most WaitMax is waited for; a longer one ends the retries with an [*APIError] carrying it.
	WaitMin, WaitMax time.Duration
}

// DefaultRetryPolicy returns the policy a client has unless told otherwise: 4 retries, waits of 0.5-10 s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxRetries: 4, WaitMin: 500 * time.Millisecond, WaitMax: 10 * time.Second}
}

// set makes p the policy of s, or fails naming the option.
func (p RetryPolicy) set(name string, s *settings) error {
	if p.MaxRetries < 0 {
		return fmt.Errorf("mediagen: %s: negative MaxRetries %d", name, p.MaxRetries)
	}
	if p.WaitMin < 0 || p.WaitMax < p.WaitMin {
		return fmt.Errorf("mediagen: %s(%s, %s): want 0 <= min <= max", name, p.WaitMin, p.WaitMax)
	}
	s.retry = p
	return nil
}

// WithRetryPolicy replaces the retry policy; [Client.RetryPolicy] reads the current one.
func WithRetryPolicy(p RetryPolicy) Option {
	return func(s *settings) error { return p.set("WithRetryPolicy", s) }
}

// WithMaxRetries sets [RetryPolicy.MaxRetries].
func WithMaxRetries(n int) Option {
	return nonNegative("WithMaxRetries", n, func(s *settings) { s.retry.MaxRetries = n })
}

// WithRetryWait sets [RetryPolicy.WaitMin] and [RetryPolicy.WaitMax]; a min of 0 retries without waiting.
func WithRetryWait(min, max time.Duration) Option {
	return func(s *settings) error {
		p := s.retry
		p.WaitMin, p.WaitMax = min, max
		return p.set("WithRetryWait", s)
	}
}

// WithTimeout bounds each attempt of an API request, to the end of its answer; 0 leaves the context's
// bound alone. The default is [DefaultTimeout], or the Timeout of [WithHTTPClient]'s client.
func WithTimeout(d time.Duration) Option {
	return nonNegative("WithTimeout", d, func(s *settings) { s.timeout, s.timeoutSet = d, true })
}

// WithTransferTimeout is [WithTimeout] for uploads and downloads; the default is [DefaultTransferTimeout], or
// the Timeout of [WithHTTPClient]'s client.
func WithTransferTimeout(d time.Duration) Option {
	return nonNegative("WithTransferTimeout", d, func(s *settings) { s.transfer, s.transferSet = d, true })
}

// WithBaseURL sets the service address, such as "https://api.example.com", over MEDIAGEN_BASE_URL. New only.
func WithBaseURL(u string) Option {
	return newOnly("WithBaseURL", func(s *settings) error {
		s.baseURL = u
		return nil
	})
}

// WithHTTPClient sets the HTTP client under the client's retries, timeouts and middleware. New only.
func WithHTTPClient(hc *http.Client) Option {
	return newOnly("WithHTTPClient", func(s *settings) error {
		return nonNil(hc, "WithHTTPClient: nil *http.Client", &s.httpClient)
	})
}

// WithUserAgent sets the User-Agent header of API requests; the default is "mediagen-go/" + [Version].
func WithUserAgent(ua string) Option {
	return func(s *settings) error {
		if strings.ContainsAny(ua, "\r\n") {
			return errors.New("mediagen: WithUserAgent: line break in user agent")
		}
		s.userAgent = ua
		return nil
	}
}

// WithHeader adds a header value to every API request (storage's are signed). Authorization, User-Agent
// and the headers of the body or the connection (Content-Type, Host, ...) are the client's: refused.
func WithHeader(key, value string) Option {
	return func(s *settings) error {
		k := textproto.CanonicalMIMEHeaderKey(key)
		switch {
		case !validHeaderName(key):
			return fmt.Errorf("mediagen: WithHeader: %q is not a header name", key)
		case strings.ContainsAny(value, "\r\n\x00"):
			return fmt.Errorf("mediagen: WithHeader(%s): line break in value", k)
		case k == "Authorization" || k == "User-Agent":
			return fmt.Errorf("mediagen: WithHeader(%s): set by the client; see New and WithUserAgent", k)
		case perRequestHeader[k]:
			return fmt.Errorf("mediagen: WithHeader(%s): set by the client for each request's body and connection", k)
		}
		h := s.header.Clone()
		if h == nil {
			h = http.Header{}
		}
		h.Add(k, value)
		s.header = h
		return nil
	}
}

// perRequestHeader lists the headers each request sets from its body and connection.
var perRequestHeader = map[string]bool{
	"Content-Type": true, "Content-Length": true, "Content-Encoding": true, "Transfer-Encoding": true,
	"Host": true, "Connection": true, "Te": true, "Trailer": true, "Upgrade": true,
}

func validHeaderName(k string) bool {
	return k != "" && !strings.ContainsFunc(k, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
	})
}

// WithResponseInto stores in *dst the last HTTP response a call received, its body closed. Per call only.
func WithResponseInto(dst **http.Response) Option {
	return oneCall("WithResponseInto", func(s *settings) error {
		return nonNil(dst, "WithResponseInto: nil destination", &s.responseInto)
	})
}

// WithWebhookURL asks the service to POST a signed event to u (public https; the reference server allows
// loopback http) when a generation or a voice clone first reaches a terminal state; other calls ignore it.
func WithWebhookURL(u string) Option {
	return func(s *settings) error {
		if u != "" {
			p, err := url.Parse(u)
			if err != nil || p.Host == "" || (p.Scheme != "https" && p.Scheme != "http") {
				return fmt.Errorf("mediagen: WithWebhookURL: %s is not an absolute URL", strconv.Quote(u))
			}
		}
		s.webhookURL = u
		return nil
	}
}

// WithLogger logs requests, retries and billing-safe decisions at Debug, failures and 5xx at Warn;
// never headers, bodies or the API key.
func WithLogger(l *slog.Logger) Option {
	return func(s *settings) error {
		s.logger = cmp.Or(l, slog.New(slog.DiscardHandler))
		return nil
	}
}

// Middleware wraps each attempt of each HTTP request, storage's too (do not record their signed query):
// call next to send req, or a req.Clone you changed.
type Middleware func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error)

// WithMiddleware adds mw around every attempt, the first given outermost; a call's runs inside the client's.
func WithMiddleware(mw ...Middleware) Option {
	return func(s *settings) error {
		if slices.ContainsFunc(mw, func(m Middleware) bool { return m == nil }) {
			return errors.New("mediagen: WithMiddleware: nil middleware")
		}
		s.middleware = append(slices.Clip(s.middleware), mw...)
		return nil
	}
}

// Clock is where the client, and packages waiting for it, read the time and wait; the wall clock by default.
type Clock interface {
	Now() time.Time
	// Sleep waits d, or until ctx ends, and then returns ctx.Err().
	Sleep(ctx context.Context, d time.Duration) error
}

// WithClock sets the [Clock]: a test clock that moves when slept on makes waits take no wall time.
func WithClock(clk Clock) Option {
	return func(s *settings) error { return nonNil(clk, "WithClock: nil clock", &s.clock) }
}

// WithTracerProvider makes the client trace (see the README) with tp, not the global provider. New only.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return newOnly("WithTracerProvider", func(s *settings) error {
		return nonNil(tp, "WithTracerProvider: nil provider", &s.tracerProvider)
	})
}

// WithMeterProvider makes the client record its metrics (see the README) with mp. New only.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return newOnly("WithMeterProvider", func(s *settings) error {
		return nonNil(mp, "WithMeterProvider: nil provider", &s.meterProvider)
	})
}

// normalizeBaseURL checks u and strips a trailing slash and "/v3". Its errors quote no credentials.
func normalizeBaseURL(u string) (baseURL, error) {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL itself
		}
		return baseURL{}, fmt.Errorf("mediagen: base URL: %w", err)
	}
	if p.User != nil {
		return baseURL{}, errors.New("mediagen: base URL must not carry credentials")
	}
	if p.Scheme != "http" && p.Scheme != "https" || p.Host == "" {
		shown := strconv.Quote(u)
		if strings.Contains(u, "@") {
			shown = "(not shown: it may hold credentials)"
		}
		return baseURL{}, fmt.Errorf("mediagen: base URL %s: want http:// or https:// and a host", shown)
	}
	p.Path = strings.TrimSuffix(strings.TrimSuffix(p.Path, "/"), "/v3")
	p.RawQuery, p.Fragment, p.RawFragment = "", "", ""
	return baseURL{url: *p, rawPath: p.EscapedPath()}, nil
}
