package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/mediagen/mediagen-go/internal/api"
)

// FuzzReadAnswer feeds answers a hostile service could send to the reader
// of every API answer: it never panics, never reads past its cap, and a
// body over the cap fails with ErrTooLarge, not as something to retry.
func FuzzReadAnswer(f *testing.F) {
	f.Add([]byte(`{"generation":{"id":"gen_1","status":"done"}}`), int64(-1), uint16(0))
	f.Add([]byte(`{"generation":{"id":"`), int64(-1), uint16(8))
	f.Add([]byte(`{}`), int64(2), uint16(0))
	f.Add([]byte(`[1,2,3]`), int64(100), uint16(1))
	c, err := New("mg_key_fuzz_123456", WithBaseURL("http://127.0.0.1:1"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, declared int64, repeat uint16) {
		// repeat grows the body past the cap without a large corpus entry.
		var r io.Reader = bytes.NewReader(body)
		if repeat > 0 && len(body) > 0 {
			r = io.LimitReader(&cycle{b: body}, int64(len(body))*int64(repeat)*1024)
		}
		counted := &countReader{r: r}
		resp := &http.Response{StatusCode: http.StatusOK, ContentLength: declared, Body: io.NopCloser(counted),
			Header: http.Header{}, Request: &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/v3/generations/g"}}}
		var env api.GenerationEnvelope
		err := c.read(context.Background(), c.base, resp, &env)
		if counted.n > maxResponseBody+64<<10 {
			t.Fatalf("read %d bytes, past the cap", counted.n)
		}
		var be *bodyError
		if errors.Is(err, ErrTooLarge) && errors.As(err, &be) && be.Transient() {
			t.Fatal("a body over the cap reads as transient")
		}
	})
}

type cycle struct {
	b []byte
	i int
}

func (c *cycle) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], c.b[c.i:])
		n += k
		c.i = (c.i + k) % len(c.b)
	}
	return n, nil
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
