package client

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/mediagen/mediagen-go/internal/engine"
)

// The hot requests (get, list, create a generation) are built here from the base URL parsed once, the
// others by the generated builders ([fromGenerated]); TestHandBuiltRequestsMatchGenerated holds them equal.

// baseURL is the service address, parsed once, its path prefix (often empty) without a trailing slash.
type baseURL struct {
	url     url.URL
	rawPath string // the prefix as escaped, for paths that need escaping
}

// request returns a request, by value, for path (escaped as escaped, if not "") below the base URL.
func (c *Client) request(method, path, escaped, rawQuery string, class engine.Class) engine.Request {
	r := engine.Request{Method: method, URL: c.baseURL.url, Class: class}
	r.URL.Path = c.baseURL.url.Path + path
	if escaped != "" {
		r.URL.RawPath = c.baseURL.rawPath + escaped
	}
	r.URL.RawQuery = rawQuery
	return r
}

// fromGenerated turns a generated builder's request into a Safe one for the engine, its body read.
func fromGenerated(req *http.Request, err error) (*engine.Request, error) {
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidArgument, err)
	}
	r := &engine.Request{Method: req.Method, URL: *req.URL, Class: engine.Safe}
	if req.Body != nil {
		if r.Body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		r.Header = jsonHeader
	}
	return r, nil
}

// jsonHeader is shared by requests: net/http only reads it, and [Middleware] changes a clone.
var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// getGenerationRequest is GET /v3/generations/{id}.
func (c *Client) getGenerationRequest(id string) engine.Request {
	const prefix = "/v3/generations/"
	escaped := ""
	if e := url.PathEscape(id); e != id {
		escaped = prefix + e
	}
	return c.request(http.MethodGet, prefix+id, escaped, "", engine.Safe)
}

// listGenerationsRequest is GET /v3/generations with the parameters set; the service defaults the others.
func (c *Client) listGenerationsRequest(p ListParams) engine.Request {
	q := url.Values{}
	if p.Feature != "" {
		q.Set("feature", string(p.Feature))
	}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	return c.request(http.MethodGet, "/v3/generations", "", q.Encode(), engine.Safe)
}

// createGenerationRequestBody encodes a create, copying args (encoded) where RawMessage rescans them.
func createGenerationRequestBody(args []byte, feature, webhookURL string) []byte {
	b := make([]byte, 0, len(args)+len(feature)+len(webhookURL)+40)
	b = append(b, `{"args":`...)
	b = append(b, args...)
	b = append(b, `,"feature":`...)
	b = appendJSONString(b, feature)
	if webhookURL != "" {
		b = append(b, `,"webhookUrl":`...)
		b = appendJSONString(b, webhookURL)
	}
	return append(b, '}')
}

// jsonKey appends key ("name":) to the object begun at b[o], after a comma unless it is its first.
func jsonKey(b []byte, o int, key string) []byte {
	if len(b) > o+1 {
		b = append(b, ',')
	}
	return append(b, key...)
}

// appendJSONString appends s as a JSON string, as json.Marshal writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // escapes needed: the encoder's own rules
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// createGenerationRequest is POST /v3/generations with body, encoded.
func (c *Client) createGenerationRequest(body []byte) engine.Request {
	r := c.request(http.MethodPost, "/v3/generations", "", "", engine.Charging)
	r.Body, r.Header = body, jsonHeader
	return r
}
