package refserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/refserver/fault"
)

// TestControlPrefix is the path prefix of the test-control API. It lies
// outside /v3 so that it can never be mistaken for the service's contract.
const TestControlPrefix = "/test/v1"

// IsTestControlPath reports whether path belongs to the test-control API,
// for a command that routes it to [Server.TestControl].
func IsTestControlPath(path string) bool {
	return path == TestControlPrefix || strings.HasPrefix(path, TestControlPrefix+"/")
}

// maxTestControlBody caps test-control request bodies; the biggest is a
// fault configuration of a few hundred bytes.
const maxTestControlBody = 64 << 10

// maxAdvance caps one clock advance, far beyond any expiry of the service
// yet far from overflowing the clock's offset.
const maxAdvance = 10 * 365 * 24 * time.Hour

// TestControl returns the handler of the test-control API under
// [TestControlPrefix], described by openapi/testcontrol.json: read and
// advance the clock, read and set the caller's balance, rotate the caller's
// webhook secret, retire a catalog voice, read and set fault rates. Callers
// authenticate with a project's API key exactly as on /v3. Errors have the
// /v3 body, {"error":{"code","message"}}.
//
// Advancing needs a server built with an [AdvanceableClock] (WithClock),
// and setting faults one built with [WithFaults]; otherwise those routes
// answer 501. The handler is separate from [Server.ServeHTTP], outside the
// fault injector, so that a test can always heal the server it broke; mount
// it only when test control is wanted.
func (s *Server) TestControl() http.Handler {
	tc := &testControl{s: s, mux: http.NewServeMux()}
	for _, rt := range tc.routes() {
		tc.mux.Handle(rt.method+" "+rt.path, tc.endpoint(rt.handle))
	}
	return tc
}

type testControl struct {
	s   *Server
	mux *http.ServeMux
}

// tcRoute is one operation of the test-control API; openapi/testcontrol.json
// lists the same ones, which a test checks.
type tcRoute struct {
	method, path string
	handle       func(r *http.Request, p *project) (any, *apiError)
}

func (tc *testControl) routes() []tcRoute {
	return []tcRoute{
		{http.MethodGet, TestControlPrefix + "/clock", tc.getClock},
		{http.MethodPost, TestControlPrefix + "/clock/advance", tc.advanceClock},
		{http.MethodGet, TestControlPrefix + "/balance", tc.getBalance},
		{http.MethodPut, TestControlPrefix + "/balance", tc.setBalance},
		{http.MethodPost, TestControlPrefix + "/webhook-secret/rotate", tc.rotateSecret},
		{http.MethodPost, TestControlPrefix + "/voices/{voice}/retire", tc.retireVoice},
		{http.MethodGet, TestControlPrefix + "/faults", tc.getFaults},
		{http.MethodPut, TestControlPrefix + "/faults", tc.setFaults},
	}
}

// ServeHTTP authenticates, then routes; like /v3 it answers 401 before
// telling whether a path exists.
func (tc *testControl) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Date", tc.s.clock.Now().UTC().Format(http.TimeFormat))
	p, aerr := tc.s.authenticate(r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), projectKey{}, p))
	if h, pattern := tc.mux.Handler(r); pattern == "" {
		writeNoRoute(w, r, h) // in JSON, as /v3 answers
		return
	}
	tc.mux.ServeHTTP(w, r)
}

// endpoint adapts an operation to http.Handler: it caps the body and writes
// the answer as JSON.
func (tc *testControl) endpoint(handle func(*http.Request, *project) (any, *apiError)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxTestControlBody)
		p, aerr := caller(r.Context())
		if aerr != nil {
			writeError(w, aerr)
			return
		}
		out, aerr := handle(r, p)
		if aerr != nil {
			writeError(w, aerr)
			return
		}
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(out); err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = buf.WriteTo(w)
	})
}

// decodeBody reads one JSON object into v. Unknown fields are refused: a
// misspelt field in a test script should fail loudly, not be ignored.
func decodeBody(r *http.Request, v any) *apiError {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return invalidf("request body is larger than %d bytes", maxTestControlBody)
		}
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			return invalidf("%s", strings.TrimPrefix(err.Error(), "json: "))
		}
		return invalidf("%s", describeDecodeError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalidf("the body must hold one JSON object and nothing after it")
	}
	return nil
}

// unavailable is the answer of an operation the server was not built for.
func unavailable(format string, args ...any) *apiError {
	return newError(http.StatusNotImplemented, api.ErrorCodeUnavailable, format, args...)
}

// clockState is the answer of both clock routes.
type clockState struct {
	Now time.Time `json:"now"`
}

func (tc *testControl) getClock(*http.Request, *project) (any, *apiError) {
	return clockState{Now: tc.s.clock.Now().UTC()}, nil
}

// advanceRequest says how far to move the clock: seconds (a number) or a Go
// duration string such as "24h1m", exactly one of them.
type advanceRequest struct {
	Seconds  *float64 `json:"seconds"`
	Duration *string  `json:"duration"`
}

// advanceClock moves the clock forward and settles the server, so that the
// next request sees every transition due (renders ended, generations and
// URLs expired) and their webhook deliveries have started.
func (tc *testControl) advanceClock(r *http.Request, _ *project) (any, *apiError) {
	var req advanceRequest
	if aerr := decodeBody(r, &req); aerr != nil {
		return nil, aerr
	}
	var d time.Duration
	switch {
	case (req.Seconds == nil) == (req.Duration == nil):
		return nil, invalidf("give exactly one of seconds (a number) and duration (such as \"24h1m\")")
	case req.Seconds != nil:
		sec := *req.Seconds
		if !(sec >= 0 && sec <= maxAdvance.Seconds()) {
			return nil, invalidf("seconds must be between 0 and %.0f", maxAdvance.Seconds())
		}
		d = time.Duration(math.Round(sec * float64(time.Second)))
	default:
		var err error
		if d, err = time.ParseDuration(*req.Duration); err != nil {
			return nil, invalidf("duration %q is not a duration such as \"90s\" or \"24h1m\"", *req.Duration)
		}
		if d < 0 || d > maxAdvance {
			return nil, invalidf("duration must be between 0s and %s", maxAdvance)
		}
	}
	clk, ok := tc.s.clock.(AdvanceableClock)
	if !ok {
		return nil, unavailable("this server's clock cannot be advanced: build it with an AdvanceableClock (the command does with -test-control)")
	}
	// The clock only moves forward: the state machines assume time does.
	clk.Advance(d)
	tc.s.Settle()
	return clockState{Now: tc.s.clock.Now().UTC()}, nil
}

// balanceState is the body of PUT and the answer of both balance routes.
type balanceState struct {
	Balance *float64 `json:"balance"`
}

func (tc *testControl) getBalance(_ *http.Request, p *project) (any, *apiError) {
	b := tc.s.Balance(p.key)
	return balanceState{Balance: &b}, nil
}

func (tc *testControl) setBalance(r *http.Request, p *project) (any, *apiError) {
	var req balanceState
	if aerr := decodeBody(r, &req); aerr != nil {
		return nil, aerr
	}
	if req.Balance == nil {
		return nil, invalidf("balance is required (USD)")
	}
	if v := *req.Balance; !(v >= 0 && v <= 1e9) {
		return nil, invalidf("balance must be between 0 and 1000000000 USD")
	}
	tc.s.SetBalance(p.key, *req.Balance)
	return tc.getBalance(r, p)
}

// rotation is the answer of a webhook secret rotation.
type rotation struct {
	WebhookSecret      string    `json:"webhookSecret"`
	PreviousSecret     string    `json:"previousSecret"`
	PreviousValidUntil time.Time `json:"previousValidUntil"`
}

func (tc *testControl) rotateSecret(_ *http.Request, p *project) (any, *apiError) {
	if _, ok := tc.s.RotateWebhookSecret(p.key); !ok {
		return nil, notFoundf("the project is gone")
	}
	tc.s.mu.Lock()
	defer tc.s.mu.Unlock()
	return rotation{WebhookSecret: p.secret, PreviousSecret: p.previous, PreviousValidUntil: p.previousUntil.UTC()}, nil
}

// retiredVoice is the answer of a retirement.
type retiredVoice struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
}

func (tc *testControl) retireVoice(r *http.Request, _ *project) (any, *apiError) {
	ref := r.PathValue("voice")
	v, ok := tc.s.lookupVoice(ref)
	if !ok || !tc.s.RetireVoice(v.ID) {
		return nil, notFoundf("no live catalog voice has the id or slug %q (clones cannot be retired)", ref)
	}
	return retiredVoice{ID: v.ID, Slug: v.Slug}, nil
}

// faultConfig is fault.Config in JSON: camelCase names, durations as Go
// duration strings ("300ms"). A test checks it keeps every field.
type faultConfig struct {
	Seed           int64    `json:"seed"`
	RenderError    float64  `json:"renderError"`
	RenderTimeout  float64  `json:"renderTimeout"`
	RenderFeatures []string `json:"renderFeatures"`
	HTTPStatus     float64  `json:"httpStatus"`
	Statuses       []int    `json:"statuses"`
	RetryAfter     string   `json:"retryAfter"`
	DropBefore     float64  `json:"dropBefore"`
	DropAfter      float64  `json:"dropAfter"`
	Latency        string   `json:"latency"`
	Paths          []string `json:"paths"`
	Methods        []string `json:"methods"`
}

// faultStats is fault.Stats in JSON.
type faultStats struct {
	Requests       int64 `json:"requests"`
	Replaced       int64 `json:"replaced"`
	DroppedBefore  int64 `json:"droppedBefore"`
	DroppedAfter   int64 `json:"droppedAfter"`
	Delayed        int64 `json:"delayed"`
	RenderErrors   int64 `json:"renderErrors"`
	RenderTimeouts int64 `json:"renderTimeouts"`
}

// faultState is the answer of both fault routes.
type faultState struct {
	Config faultConfig `json:"config"`
	Stats  faultStats  `json:"stats"`
}

// nonNil makes empty lists encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func toFaultConfig(c fault.Config) faultConfig {
	return faultConfig{
		Seed:           c.Seed,
		RenderError:    c.RenderError,
		RenderTimeout:  c.RenderTimeout,
		RenderFeatures: nonNil(c.RenderFeatures),
		HTTPStatus:     c.HTTPStatus,
		Statuses:       nonNil(c.Statuses),
		RetryAfter:     c.RetryAfter.String(),
		DropBefore:     c.DropBefore,
		DropAfter:      c.DropAfter,
		Latency:        c.Latency.String(),
		Paths:          nonNil(c.Paths),
		Methods:        nonNil(c.Methods),
	}
}

func (c faultConfig) config() (fault.Config, *apiError) {
	dur := func(name, v string) (time.Duration, *apiError) {
		if v == "" {
			return 0, nil
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return 0, invalidf("%s %q is not a duration such as \"2s\" or \"300ms\"", name, v)
		}
		return d, nil
	}
	retryAfter, aerr := dur("retryAfter", c.RetryAfter)
	if aerr != nil {
		return fault.Config{}, aerr
	}
	latency, aerr := dur("latency", c.Latency)
	if aerr != nil {
		return fault.Config{}, aerr
	}
	return fault.Config{
		Seed:           c.Seed,
		RenderError:    c.RenderError,
		RenderTimeout:  c.RenderTimeout,
		RenderFeatures: c.RenderFeatures,
		HTTPStatus:     c.HTTPStatus,
		Statuses:       c.Statuses,
		RetryAfter:     retryAfter,
		DropBefore:     c.DropBefore,
		DropAfter:      c.DropAfter,
		Latency:        latency,
		Paths:          c.Paths,
		Methods:        c.Methods,
	}, nil
}

func (tc *testControl) faultState() faultState {
	in := tc.s.faults // nil reads as the zero config and counts
	st := in.Stats()
	return faultState{
		Config: toFaultConfig(in.Config()),
		Stats: faultStats{
			Requests:       st.Requests,
			Replaced:       st.Replaced,
			DroppedBefore:  st.DroppedBefore,
			DroppedAfter:   st.DroppedAfter,
			Delayed:        st.Delayed,
			RenderErrors:   st.RenderErrors,
			RenderTimeouts: st.RenderTimeouts,
		},
	}
}

func (tc *testControl) getFaults(*http.Request, *project) (any, *apiError) {
	return tc.faultState(), nil
}

// setFaults replaces the whole fault configuration: fields left out are
// zero, so {} heals the server.
func (tc *testControl) setFaults(r *http.Request, _ *project) (any, *apiError) {
	var req faultConfig
	if aerr := decodeBody(r, &req); aerr != nil {
		return nil, aerr
	}
	cfg, aerr := req.config()
	if aerr != nil {
		return nil, aerr
	}
	if tc.s.faults == nil {
		return nil, unavailable("this server was built without a fault injector: build it with WithFaults (the command does with -test-control)")
	}
	if err := tc.s.faults.SetConfig(cfg); err != nil {
		// Validate joins its reasons with newlines; keep the message one line.
		return nil, invalidf("%s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return tc.faultState(), nil
}
