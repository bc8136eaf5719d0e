package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/charge"
	"github.com/mediagen/mediagen-go/internal/engine"
	"github.com/mediagen/mediagen-go/internal/retry"
	"github.com/mediagen/mediagen-go/internal/telemetry"
)

// Version is the version of this module, sent in the User-Agent header as "mediagen-go/" + Version.
const Version = "0.3.0"

// Environment variables [New] reads when the matching argument or option is not given.
const (
	EnvAPIKey  = "MEDIAGEN_API_KEY"
	EnvBaseURL = "MEDIAGEN_BASE_URL"
)

// maxResponseBody caps a successful answer; the largest (a page of 100 generations) are a few MiB.
const maxResponseBody = 8 << 20

// Client talks to the service on behalf of one project. It is safe for concurrent use: create one and
// share it, as it remembers the generations it handed out, which billing-safe retries rely on.
type Client struct {
	apiKey  string
	eng     *engine.Engine // every HTTP exchange
	server  string         // the base URL, for the generated request builders
	baseURL baseURL        // the base URL, parsed once, for the hot paths
	base    *config        // New's options, resolved
	search  *config        // the client's, with the search's patience

	proto   *charge.Protocol                    // the charging protocol's state
	listing charge.Listing[mediagen.Generation] // listings shared by searches
	prices  priceCache                          // for the estimate a keyed call records
	tel     *telemetry.T                        // traces and metrics
}

// config is a resolved set of options (the client's, or a call's on top), passed to each request of a call.
type config struct {
	s      settings
	call   engine.Call
	charge charge.Call
}

// New returns a client for the project of apiKey, else of MEDIAGEN_API_KEY, at [WithBaseURL] or else
// MEDIAGEN_BASE_URL. It fails with [ErrNoAPIKey], [ErrNoBaseURL], or an option's error; it sends nothing.
func New(apiKey string, opts ...Option) (*Client, error) {
	s := defaultSettings()
	if err := s.apply(opts); err != nil {
		return nil, err
	}
	apiKey = cmp.Or(apiKey, os.Getenv(EnvAPIKey))
	s.baseURL = cmp.Or(s.baseURL, os.Getenv(EnvBaseURL))
	if apiKey == "" {
		return nil, ErrNoAPIKey
	}
	if s.baseURL == "" {
		return nil, ErrNoBaseURL
	}
	base, err := normalizeBaseURL(s.baseURL)
	if err != nil {
		return nil, err
	}
	s.httpClient = cmp.Or(s.httpClient, &http.Client{})
	if s.journal == nil {
		s.journal = journal.NewMemory()
	}
	if t := s.httpClient.Timeout; t > 0 {
		if !s.timeoutSet {
			s.timeout = t
		}
		if !s.transferSet {
			s.transfer = t
		}
	}
	// The generated builders resolve paths against server: a path prefix needs its trailing slash.
	c := &Client{apiKey: apiKey, server: base.url.String() + "/", baseURL: base, base: resolve(s)}
	c.tel = &telemetry.T{TP: s.tracerProvider, MP: s.meterProvider}
	c.proto = charge.New(chargeErrors)
	c.eng = engine.New(s.httpClient, apiKey, c.tel)
	c.search = c.searchConfig(c.base)
	// A search waits for others to share its listing no longer than the client's retries wait.
	c.listing.Gather = min(250*time.Millisecond, s.retry.WaitMax/4)
	return c, nil
}

// RetryPolicy returns the client's retry policy.
func (c *Client) RetryPolicy() RetryPolicy { return c.base.s.retry }

// Journal returns the journal the client records idempotency keys in: [WithJournal]'s, or its own in memory.
func (c *Client) Journal() journal.Journal { return c.base.s.journal }

// Clock returns the [Clock] of a call with opts, for packages that wait on the client's behalf (poll).
func (c *Client) Clock(opts ...Option) Clock {
	if cfg, err := c.configure(opts); err == nil {
		return cfg.s.clock
	}
	return c.base.s.clock
}

// resolve turns settings into the engine's and the charging protocol's settings of a call.
func resolve(s settings) *config {
	mw := make([]engine.Middleware, len(s.middleware))
	for i, m := range s.middleware {
		mw[i] = engine.Middleware(m)
	}
	policy := retry.Policy{MaxRetries: s.retry.MaxRetries, WaitMin: s.retry.WaitMin, WaitMax: s.retry.WaitMax}
	return &config{s: s, call: engine.Call{
		Timeout:      s.timeout,
		Transfer:     s.transfer,
		Retry:        policy,
		Header:       s.header,
		UserAgent:    []string{s.userAgent},
		Middleware:   mw,
		Logger:       s.logger,
		Clock:        s.clock,
		ResponseInto: s.responseInto,
	}, charge: charge.Call{
		Clock: s.clock, Logger: s.logger, Retry: policy, Key: s.idemKey, Journal: s.journal, Hold: s.hold,
	}}
}

// configure returns the configuration of a call with opts; without any, the client's, allocating nothing.
func (c *Client) configure(opts []Option) (*config, error) {
	if len(opts) == 0 {
		return c.base, nil
	}
	s := c.base.s
	s.perCall = true
	if err := s.apply(opts); err != nil {
		return nil, err
	}
	return resolve(s), nil
}

// do sends r under cfg and reads the answer into out (nil for none), returning it for its headers.
func (c *Client) do(ctx context.Context, cfg *config, r *engine.Request, out any) (*http.Response, error) {
	var got *http.Response
	err := c.eng.Do(ctx, &cfg.call, r, func(resp *http.Response) error {
		got = resp
		return c.read(ctx, cfg, resp, out)
	})
	if err != nil { // Do returns ctx.Err() as it is
		if se := (*engine.SendError)(nil); errors.As(err, &se) {
			err = fmt.Errorf("mediagen: %w", err)
		}
	}
	return got, err
}

// read reads an answer: into out on 2xx, or into an error otherwise.
func (c *Client) read(ctx context.Context, cfg *config, resp *http.Response, out any) error {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return newAPIError(resp, body, c.apiKey, cfg.call.Clock.Now())
	}
	if out == nil {
		return nil
	}
	if resp.ContentLength > maxResponseBody {
		return newBodyError(resp, tooLarge("the answer", maxResponseBody, resp.ContentLength))
	}
	if err := decodeAnswer(resp, out); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return newBodyError(resp, err)
	}
	return nil
}

// decodeAnswer decodes a JSON answer into out as json.Decoder reads it. A
// short one of known length is read whole into a pooled buffer and
// unmarshalled: no decoder and no buffers grown for each answer. The
// decoder reads the rest: an answer of unknown length, a long one, and one
// that unmarshalling alone would read otherwise (data after the value, a
// body longer or shorter than it said, a failed read).
func decodeAnswer(resp *http.Response, out any) error {
	if resp.ContentLength < 0 || resp.ContentLength > maxPooledAnswer {
		var body io.Reader = resp.Body
		if resp.ContentLength < 0 {
			body = &capReader{r: resp.Body, limit: maxResponseBody, what: "the answer"}
		}
		return json.NewDecoder(body).Decode(out)
	}
	bp := answerBufs.Get().(*[]byte)
	defer answerBufs.Put(bp)
	*bp = slices.Grow((*bp)[:0], int(resp.ContentLength)+1)
	// One byte more than said: the body must end where it said it would.
	buf := (*bp)[:resp.ContentLength+1]
	n, err := io.ReadFull(resp.Body, buf)
	if err == io.ErrUnexpectedEOF { // ended, short of buf
		err = io.EOF
	}
	if n == int(resp.ContentLength) && err == io.EOF {
		// Unmarshal checks the syntax before it writes to out.
		uerr := json.Unmarshal(buf[:n], out)
		if _, syntax := uerr.(*json.SyntaxError); !syntax {
			return uerr
		}
	}
	var rest io.Reader = resp.Body
	if err != nil && err != io.EOF {
		rest = errReader{err}
	}
	return json.NewDecoder(io.MultiReader(bytes.NewReader(buf[:n]), rest)).Decode(out)
}

// errReader fails its reads with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// maxPooledAnswer is the longest answer read into a pooled buffer.
const maxPooledAnswer = 64 << 10

var answerBufs = sync.Pool{New: func() any { return new([]byte) }}

// ErrTooLarge matches an answer over 8 MiB or a download over [WithMaxDownload]; it is not transient.
var ErrTooLarge = errors.New("mediagen: too large")

func tooLarge(what string, limit, size int64) error {
	if size >= 0 {
		return fmt.Errorf("%w: %s is %d bytes, over the %d the client takes", ErrTooLarge, what, size, limit)
	}
	return fmt.Errorf("%w: %s is over the %d bytes the client takes", ErrTooLarge, what, limit)
}

// capReader fails with [ErrTooLarge] past limit bytes of r, where a LimitReader would end as if r had.
type capReader struct {
	r     io.Reader
	limit int64
	n     int64
	what  string
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		var one [1]byte
		if n, err := c.r.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, tooLarge(c.what, c.limit, -1)
	}
	n, err := c.r.Read(p[:min(int64(len(p)), c.limit-c.n)])
	c.n += int64(n)
	return n, err
}

// bodyError is a 2xx answer that could not be read to the end or decoded.
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

// Transient is true unless the answer was too large. For a charging request it is ambiguous instead.
func (e *bodyError) Transient() bool { return !errors.Is(e.err, ErrTooLarge) }

// errNoID is the failure of a 2xx answer to a charging request that names no row.
var errNoID = errors.New("the answer carries no id")
