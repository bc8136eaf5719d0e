package engine

import (
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mediagen/mediagen-go/internal/retry"
)

var (
	reset   = &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
	refusal = &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
)

func status(code int, retryAfter string) *http.Response {
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return &http.Response{StatusCode: code, Header: h}
}

// TestClassify is the billing-safe rule as a table: which attempts are
// retried, by class.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name  string
		class Class
		sent  bool
		resp  *http.Response
		err   error
		retry bool
	}{
		{"safe: connection reset", Safe, true, nil, reset, true},
		{"safe: refused", Safe, false, nil, refusal, true},
		{"safe: 429", Safe, true, status(429, ""), nil, true},
		{"safe: 502", Safe, true, status(502, ""), nil, true},
		{"safe: 503", Safe, true, status(503, "1"), nil, true},
		{"safe: 504", Safe, true, status(504, ""), nil, true},
		{"safe: 500", Safe, true, status(500, ""), nil, true},
		{"safe: 501 is not retried", Safe, true, status(501, ""), nil, false},
		{"safe: 404", Safe, true, status(404, ""), nil, false},
		{"safe: 200", Safe, true, status(200, ""), nil, false},
		{"safe: bad certificate", Safe, true, nil, &url.Error{Op: "Get", URL: "https://x", Err: x509.UnknownAuthorityError{}}, false},
		{"safe: unsupported scheme", Safe, false, nil, &url.Error{Op: "Get", URL: "ftp://x", Err: errors.New("unsupported protocol scheme \"ftp\"")}, false},
		{"charging: never sent", Charging, false, nil, refusal, true},
		{"charging: reset after sending", Charging, true, nil, reset, false},
		{"charging: 429", Charging, true, status(429, "0"), nil, true},
		{"charging: 500", Charging, true, status(500, ""), nil, false},
		{"charging: 502", Charging, true, status(502, ""), nil, false},
		{"charging: 503", Charging, true, status(503, ""), nil, false},
		{"charging: 504", Charging, true, status(504, ""), nil, false},
		{"charging: 400", Charging, true, status(400, ""), nil, false},
		{"once: 429", Once, true, status(429, ""), nil, false},
		{"once: refused", Once, false, nil, refusal, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Request{Class: tc.class}
			if tc.err != nil {
				tr := newTracer()
				tr.start(true)
				tr.traced.Store(true)
				tr.sent.Store(tc.sent)
				assert.Equal(t, tc.retry, classifyError(r, progress{tr: tr}, tc.err).Retry, "traced")
				b := &body{}
				b.read.Store(tc.sent)
				assert.Equal(t, tc.retry, classifyError(r, progress{body: b}, tc.err).Retry, "by its body")
				return
			}
			_, retry := transientStatus(r, tc.resp, retry.Wall)
			assert.Equal(t, tc.retry, retry)
		})
	}
}

// TestTrustsOnlyWhatTheTransportReports covers transports that do not
// report their progress through httptrace (a test double, a wrapper that
// starts a fresh context, an HTTP/3 transport): for them a missing GotConn
// proves nothing, and only a failed dial or lookup shows the request never
// left.
func TestTrustsOnlyWhatTheTransportReports(t *testing.T) {
	lookup := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "x"}}}
	handshake := &url.Error{Op: "Post", URL: "https://x", Err: errors.New("net/http: TLS handshake timeout")}
	for _, tc := range []struct {
		name         string
		traced, sent bool
		err          error
		retry        bool
	}{
		{"untraced: reset may come after sending", false, false, reset, false},
		{"untraced: refused dial", false, false, refusal, true},
		{"untraced: failed lookup", false, false, lookup, true},
		{"untraced: other failure", false, false, handshake, false},
		{"traced: no connection yet", true, false, handshake, true},
		{"traced: reset after getting a connection", true, true, reset, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTracer()
			tr.start(true)
			tr.traced.Store(tc.traced)
			tr.sent.Store(tc.sent)
			o := classifyError(&Request{Class: Charging}, progress{tr: tr}, tc.err)
			assert.Equal(t, tc.retry, o.Retry)
			var se *SendError
			assert.True(t, errors.As(o.Err, &se))
			assert.Equal(t, !tc.retry, se.MaybeSent, "not resent means searched for")
		})
	}
}

// TestUnreadBodyWasNotSent: whatever the error says, a body the transport
// never read was not delivered, so a charging request is sent again; one it
// read may have been accepted.
func TestUnreadBodyWasNotSent(t *testing.T) {
	handshake := &url.Error{Op: "Post", URL: "https://x", Err: errors.New("net/http: TLS handshake timeout")}
	for _, read := range []bool{false, true} {
		b := &body{}
		b.read.Store(read)
		o := classifyError(&Request{Class: Charging}, progress{body: b}, handshake)
		assert.Equal(t, !read, o.Retry, "read %t", read)
	}
}

func TestRetryAfterIsRead(t *testing.T) {
	after, ok := transientStatus(&Request{Class: Safe}, status(429, "7"), retry.Wall)
	assert.True(t, ok)
	assert.Equal(t, 7*time.Second, after)
}
