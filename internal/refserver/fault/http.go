package fault

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HeaderInjected marks an answer replaced by the injector, so a test or a log
// reader can tell an injected error from a real one.
const HeaderInjected = "X-Injected-Fault"

// action is what one request gets, decided on arrival.
type action int

const (
	pass action = iota
	replace
	dropBefore
	dropAfter
)

// decision is drawn under the lock so concurrent requests consume the stream
// in arrival order.
type decision struct {
	match      bool
	act        action
	status     int
	latency    time.Duration
	retryAfter int64
}

func (in *Injector) decide(r *http.Request) decision {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.stats.Requests++
	c := &in.cfg
	if !c.matches(r) {
		return decision{}
	}
	d := decision{match: true, latency: c.Latency}
	if p := c.DropBefore + c.HTTPStatus + c.DropAfter; p > 0 {
		u := in.httpR.Float64()
		switch {
		case u < c.DropBefore:
			d.act = dropBefore
		case u < c.DropBefore+c.HTTPStatus:
			d.act = replace
			st := c.statuses()
			d.status = st[in.httpR.IntN(len(st))]
			d.retryAfter = c.retryAfterSeconds()
		case u < p:
			d.act = dropAfter
		}
	}
	return d
}

// matches applies the Paths and Methods filters.
func (c *Config) matches(r *http.Request) bool {
	if len(c.Methods) > 0 && !slicesContainsFold(c.Methods, r.Method) {
		return false
	}
	if len(c.Paths) == 0 {
		return strings.HasPrefix(r.URL.Path, DefaultPathPrefix)
	}
	for _, p := range c.Paths {
		if strings.HasPrefix(r.URL.Path, p) {
			return true
		}
	}
	return false
}

func slicesContainsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

func (in *Injector) count(f func(s *Stats)) {
	in.mu.Lock()
	defer in.mu.Unlock()
	f(&in.stats)
}

// Wrap returns next with the HTTP faults of the current Config applied; a
// SetConfig call takes effect from the next request on.
//
// An injected error status means the request was NOT processed: next never
// runs. A real 502 from a proxy could go either way; DropAfter is the fault
// for a request that was processed but whose answer was lost.
//
// Under DropAfter, next writes into a sink that keeps nothing and the
// connection is dropped once next returns, so a streaming answer is held back
// whole (Flush does nothing); keep endless streams out of reach with Paths.
func (in *Injector) Wrap(next http.Handler) http.Handler {
	if in == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := in.decide(r)
		if !d.match {
			next.ServeHTTP(w, r)
			return
		}
		if d.latency > 0 {
			in.count(func(s *Stats) { s.Delayed++ })
			if err := prereadBody(r); err != nil {
				return // the client went away while sending
			}
			t := time.NewTimer(d.latency)
			select {
			case <-t.C:
			case <-r.Context().Done():
				// The client went away; processing its request now would
				// be an effect nobody asked for any more.
				t.Stop()
				return
			}
		}
		switch d.act {
		case dropBefore:
			in.count(func(s *Stats) { s.DroppedBefore++ })
			drop(w)
		case replace:
			in.count(func(s *Stats) { s.Replaced++ })
			writeError(w, d.status, d.retryAfter)
		case dropAfter:
			next.ServeHTTP(&discardWriter{header: http.Header{}}, r)
			in.count(func(s *Stats) { s.DroppedAfter++ })
			drop(w)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// prereadLimit caps the request body held in memory during Latency.
const prereadLimit = 1 << 20

// prereadBody reads a request body of up to prereadLimit bytes ahead of the
// handler and puts it back. Go's HTTP/1 server only notices a client that
// went away once the body was read to the end, so without this a delayed POST
// would wait out its whole delay. Larger bodies stay partly unread, and their
// delay runs its full length.
func prereadBody(r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, prereadLimit+1))
	if err != nil {
		return err
	}
	if len(buf) <= prereadLimit {
		r.Body = io.NopCloser(bytes.NewReader(buf))
		return nil
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(buf), r.Body), r.Body}
	return nil
}

// drop closes the connection without a response, so the client sees a reset
// or EOF. Where the connection cannot be taken over (HTTP/2), aborting the
// handler resets the stream instead.
func drop(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// errorCodes follow the service's error codes; statuses not listed fall back
// to invalid_argument (4xx) or internal_error (5xx).
var errorCodes = map[int]string{
	400: "invalid_argument",
	401: "unauthorized",
	402: "insufficient_balance",
	403: "forbidden",
	404: "not_found",
	405: "method_not_allowed",
	413: "payload_too_large",
	415: "unsupported_media_type",
	429: "rate_limited",
	500: "internal_error",
	502: "unavailable",
	503: "unavailable",
	504: "unavailable",
}

func errorCode(status int) string {
	if c, ok := errorCodes[status]; ok {
		return c
	}
	if status < 500 {
		return "invalid_argument"
	}
	return "internal_error"
}

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		// The 402 shape carries amounts; an injected 402 has none to report.
		Required *float64 `json:"required,omitempty"`
		Balance  *float64 `json:"balance,omitempty"`
	} `json:"error"`
}

// writeError answers in the service's error shape.
func writeError(w http.ResponseWriter, status int, retryAfter int64) {
	var b errorBody
	b.Error.Code = errorCode(status)
	b.Error.Message = "injected fault: " + strings.ToLower(http.StatusText(status))
	if status == http.StatusPaymentRequired {
		zero := 0.0
		b.Error.Required, b.Error.Balance = &zero, &zero
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set(HeaderInjected, "status")
	if status == http.StatusTooManyRequests {
		h.Set("Retry-After", strconv.FormatInt(retryAfter, 10))
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(b)
}

// discardWriter takes the answer of a request whose connection will be
// dropped. The body is not kept: it is never sent, and storage downloads can
// be large. It has no Unwrap on purpose, so the handler cannot reach the real
// connection through http.ResponseController.
type discardWriter struct {
	header http.Header
	status int
}

func (d *discardWriter) Header() http.Header { return d.header }

func (d *discardWriter) WriteHeader(status int) {
	if d.status == 0 {
		d.status = status
	}
}

func (d *discardWriter) Write(p []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	return len(p), nil
}

// Flush does nothing: the answer is held back until the connection is dropped.
func (d *discardWriter) Flush() {}
