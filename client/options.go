package client

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

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

	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/retry"
)

// Default per-attempt timeouts; see [WithTimeout].
const (
	// DefaultTimeout bounds each attempt of an API request.
	DefaultTimeout = 60 * time.Second
	// DefaultTransferTimeout bounds each attempt of a transfer of bytes: a
	// signed upload's PUT, a multipart upload or a download.
	DefaultTransferTimeout = 10 * time.Minute
)

// Option configures a [Client] in [New], or one call when passed to a
// method: per-call options apply on top of the client's for that call only.
// An option given a bad value makes New, or the call, fail with an error
// naming it. [WithBaseURL] and [WithHTTPClient] belong to New alone; passed
// to a call they fail it.
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
	header       http.Header // extra API request headers; shared, cloned on write
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

// newOnly fails an option that configures the client itself when it is
// passed to one call.
func (s *settings) newOnly(name string) error {
	if s.perCall {
		return fmt.Errorf("mediagen: %s configures the client; pass it to New, not to a call", name)
	}
	return nil
}

// RetryPolicy says how often and how patiently a failed request is retried.
// Which failures are retried is not part of it: that is the billing-safe
// rule of the package documentation, which no setting can loosen.
type RetryPolicy struct {
	// MaxRetries is how many times a failed request is sent again; 0
	// disables retries. For a request that charges, it also bounds how
	// often the client submits again after finding that an ambiguous
	// attempt created nothing.
	MaxRetries int
	// WaitMin is the first backoff step; steps double up to WaitMax, with
	// jitter. A Retry-After the service sends is waited for when it is at
	// most WaitMax; a longer one ends the retries and the call returns an
	// [*APIError] carrying it.
	WaitMin, WaitMax time.Duration
}

// DefaultRetryPolicy returns the policy a client has unless told otherwise:
// 4 retries, waits from 0.5 s up to 10 s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxRetries: 4, WaitMin: 500 * time.Millisecond, WaitMax: 10 * time.Second}
}

func (p RetryPolicy) check(name string) error {
	if p.MaxRetries < 0 {
		return fmt.Errorf("mediagen: %s: negative MaxRetries %d", name, p.MaxRetries)
	}
	if p.WaitMin < 0 || p.WaitMax < p.WaitMin {
		return fmt.Errorf("mediagen: %s(%s, %s): want 0 <= min <= max", name, p.WaitMin, p.WaitMax)
	}
	return nil
}

// WithRetryPolicy replaces the retry policy; [Client.RetryPolicy] reads the
// current one.
func WithRetryPolicy(p RetryPolicy) Option {
	return func(s *settings) error {
		if err := p.check("WithRetryPolicy"); err != nil {
			return err
		}
		s.retry = p
		return nil
	}
}

// WithMaxRetries sets [RetryPolicy.MaxRetries].
func WithMaxRetries(n int) Option {
	return func(s *settings) error {
		if n < 0 {
			return fmt.Errorf("mediagen: WithMaxRetries(%d): negative", n)
		}
		s.retry.MaxRetries = n
		return nil
	}
}

// WithRetryWait sets [RetryPolicy.WaitMin] and [RetryPolicy.WaitMax]; a
// min of 0 retries without waiting.
func WithRetryWait(min, max time.Duration) Option {
	return func(s *settings) error {
		p := s.retry
		p.WaitMin, p.WaitMax = min, max
		if err := p.check("WithRetryWait"); err != nil {
			return err
		}
		s.retry = p
		return nil
	}
}

// WithTimeout bounds each attempt of an API request, from sending it to
// the end of reading the answer; a retry gets a fresh d. The default is
// [DefaultTimeout], or the Timeout of the client given to [WithHTTPClient]
// when it has one. Transfers of bytes (a signed upload's PUT, a multipart
// upload, a download) have their own bound: see [WithTransferTimeout]. 0
// means no per-attempt bound: only the context's.
func WithTimeout(d time.Duration) Option {
	return func(s *settings) error {
		if d < 0 {
			return fmt.Errorf("mediagen: WithTimeout(%s): negative", d)
		}
		s.timeout, s.timeoutSet = d, true
		return nil
	}
}

// WithTransferTimeout bounds each attempt of a transfer of bytes: a signed
// upload's PUT, a multipart upload to the API, a download. Files take
// longer than API answers, so the default is [DefaultTransferTimeout], or
// the Timeout of the client given to [WithHTTPClient] when it has one. 0
// means no per-attempt bound: only the context's.
func WithTransferTimeout(d time.Duration) Option {
	return func(s *settings) error {
		if d < 0 {
			return fmt.Errorf("mediagen: WithTransferTimeout(%s): negative", d)
		}
		s.transfer, s.transferSet = d, true
		return nil
	}
}

// WithBaseURL sets the service address, for example
// "https://api.example.com" (a trailing "/v3" is accepted and dropped). It
// takes precedence over MEDIAGEN_BASE_URL. New only.
func WithBaseURL(u string) Option {
	return func(s *settings) error {
		if err := s.newOnly("WithBaseURL"); err != nil {
			return err
		}
		s.baseURL = u
		return nil
	}
}

// WithHTTPClient sets the HTTP client whose transport and redirect policy
// every request uses; retries, timeouts and middleware are layered on top
// of it. New only.
func WithHTTPClient(hc *http.Client) Option {
	return func(s *settings) error {
		if err := s.newOnly("WithHTTPClient"); err != nil {
			return err
		}
		if hc == nil {
			return errors.New("mediagen: WithHTTPClient: nil *http.Client")
		}
		s.httpClient = hc
		return nil
	}
}

// WithUserAgent sets the User-Agent header of API requests; the default is
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

// WithHeader adds a header to every API request (not to storage, whose
// signed requests must carry exactly the signed headers). Values add to
// those of the same name given before, to New or to the call. Authorization
// and User-Agent are the client's own, and the headers that describe the
// body or the connection (Content-Type, Content-Length, Host and the like)
// follow each request: they are refused here.
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

// perRequestHeader lists the headers each request sets from its own body
// and connection; a second value would make the request malformed.
var perRequestHeader = map[string]bool{
	"Content-Type": true, "Content-Length": true, "Content-Encoding": true, "Transfer-Encoding": true,
	"Host": true, "Connection": true, "Te": true, "Trailer": true, "Upgrade": true,
}

func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// WithResponseInto stores in *dst the last HTTP response a call received
// (the last attempt's, or the last request of a search), for its status and
// headers. Its body has been read and closed. A call that received no
// answer leaves *dst unchanged. It applies to one call: given to New, calls
// from many goroutines would write to *dst at once, so New refuses it.
func WithResponseInto(dst **http.Response) Option {
	return func(s *settings) error {
		if !s.perCall || s.shared {
			return errors.New("mediagen: WithResponseInto applies to one call; pass it to the call, not to New or to options shared by many calls")
		}
		if dst == nil {
			return errors.New("mediagen: WithResponseInto: nil destination")
		}
		s.responseInto = dst
		return nil
	}
}

// WithWebhookURL asks the service to POST a signed event to u when a
// generation ([Client.CreateGeneration]) or voice clone
// ([Client.CloneVoice]) first reaches a terminal state. For the service, u
// must be https and publicly reachable; it refuses anything else with 400.
// The reference server also accepts http to a loopback host when allowed
// (clienttest always allows it; the command takes -allow-http-webhooks), so
// tests can receive on an httptest server. Given to New it applies to every
// generation and clone; other calls ignore it.
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

// WithLogger logs every request (method, path without query, status,
// duration) at Debug, each retry at Debug, failures and 5xx answers at
// Warn, and the decisions of billing-safe reconciliation at Debug. Headers,
// bodies and the API key are never logged.
func WithLogger(l *slog.Logger) Option {
	return func(s *settings) error {
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		s.logger = l
		return nil
	}
}

// Middleware wraps each attempt of each HTTP request the client sends, API
// and storage alike, for tracing, metrics or logging of your own: call next
// to send req and return what it returns (or an error instead). To change
// the request, change a clone (req.Clone). Storage requests carry signed
// URLs: do not record their query.
type Middleware func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error)

// WithMiddleware adds mw around every attempt; the first given is the
// outermost. Per-call middleware runs inside the client's.
func WithMiddleware(mw ...Middleware) Option {
	return func(s *settings) error {
		for _, m := range mw {
			if m == nil {
				return errors.New("mediagen: WithMiddleware: nil middleware")
			}
		}
		s.middleware = append(slices.Clip(s.middleware), mw...)
		return nil
	}
}

// normalizeBaseURL checks u and strips a trailing slash and "/v3", as the
// request paths carry the version. Its errors never quote credentials that u
// may carry.
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
