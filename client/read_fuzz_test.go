package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

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

// TestDecodeAnswerAsDecoder: an answer read whole and unmarshalled decodes
// as json.Decoder reads it from the body, to the same value and error:
// data after the value, a second value, a body cut short, longer or
// shorter than its length says, a failed read, a type error.
func TestDecodeAnswerAsDecoder(t *testing.T) {
	broken := errors.New("connection reset")
	for _, body := range []string{
		`{"generation":{"id":"gen_1","status":"done","params":{"a":[1,"x"]}}}`,
		`{"generation":{"id":"gen_1"}}` + "\n",
		`{"generation":{"id":"gen_1"}} trailing`,
		`{"generation":{"id":"gen_1"}}{"generation":{"id":"gen_2"}}`,
		`{"generation":{"id":"`,
		`{"generation":{"id":5,"status":"done"}}`,
		`{"generation":{"id":"gen_1","balanceUsed":"x"}}`,
		`[1,2]`, `null`, ` `, ``,
	} {
		for _, declared := range []int64{int64(len(body)), int64(len(body)) - 3, int64(len(body)) + 5, -1, maxPooledAnswer + 1} {
			for _, fail := range []bool{false, true} {
				answer := func() *http.Response {
					var r io.Reader = strings.NewReader(body)
					if fail {
						r = io.MultiReader(r, &failing{err: broken})
					}
					return &http.Response{ContentLength: declared, Body: io.NopCloser(r)}
				}
				var want, got api.GenerationEnvelope
				wantErr := json.NewDecoder(answer().Body).Decode(&want)
				gotErr := decodeAnswer(answer(), &got)
				name := fmt.Sprintf("%q declared %d, failing %v", body, declared, fail)
				assert.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), name)
				assert.Equal(t, want, got, name)
			}
		}
	}
}

type failing struct{ err error }

func (f *failing) Read([]byte) (int, error) { return 0, f.err }
