package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/mediagen/mediagen-go"
)

// The operations on the hot path (get, list and create a generation) build
// their requests here instead of through the generated builders, which
// parse the base URL and resolve the operation path on every call. The
// base URL is parsed once, in New; a request copies it and appends the
// path. TestHandBuiltRequestsMatchGenerated holds these builders to the
// generated ones.

// baseURL is the service address, parsed once: the scheme and host, and a
// path prefix without a trailing slash (often empty).
type baseURL struct {
	url     url.URL
	rawPath string // the prefix as escaped, for paths that need escaping
}

func newBaseURL(s string) (baseURL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return baseURL{}, err
	}
	return baseURL{url: *u, rawPath: u.EscapedPath()}, nil
}

// newRequest returns a request for path below the base URL, whose escaped
// form is escaped ("" when nothing in path needs escaping), with the key,
// User-Agent and the caller's headers.
func (c *Client) newRequest(ctx context.Context, method, path, escaped, rawQuery string) (*http.Request, error) {
	// An empty URL parses without work; its struct is reused for the copy
	// of the base.
	req, err := http.NewRequestWithContext(ctx, method, "", nil)
	if err != nil {
		return nil, err
	}
	u := req.URL
	*u = c.baseURL.url
	u.Path = c.baseURL.url.Path + path
	if escaped != "" {
		u.RawPath = c.baseURL.rawPath + escaped
	}
	u.RawQuery = rawQuery
	req.Host = u.Host
	c.setHeaders(ctx, req)
	return req, nil
}

// send sends a request built by newRequest, with body (nil for none) as a
// JSON body, through the billing-safe retries.
func (c *Client) send(req *http.Request, body []byte) (*http.Response, error) {
	rreq, err := retryablehttp.FromRequest(req)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header["Content-Type"] = contentTypeJSON
		if err := rreq.SetBody(body); err != nil {
			return nil, err
		}
	}
	return c.retry(rreq)
}

// contentTypeJSON is the Content-Type of JSON bodies. Requests share the
// slice, which is never modified: net/http only reads it, and middleware
// that changes a header replaces the slice (see [Middleware]).
var contentTypeJSON = []string{"application/json"}

// getGeneration sends GET /v3/generations/{id}.
func (c *Client) getGeneration(ctx context.Context, id string) (*http.Response, error) {
	req, err := c.getGenerationRequest(ctx, id)
	if err != nil {
		return nil, err
	}
	return c.send(req, nil)
}

func (c *Client) getGenerationRequest(ctx context.Context, id string) (*http.Request, error) {
	const prefix = "/v3/generations/"
	escaped := ""
	if e := url.PathEscape(id); e != id {
		escaped = prefix + e
	}
	return c.newRequest(ctx, http.MethodGet, prefix+id, escaped, "")
}

// listGenerationsPage sends GET /v3/generations with the parameters that are
// set; a zero one is left out, which the service reads as its default.
func (c *Client) listGenerationsPage(ctx context.Context, p ListParams) (*http.Response, error) {
	req, err := c.listGenerationsRequest(ctx, p)
	if err != nil {
		return nil, err
	}
	return c.send(req, nil)
}

func (c *Client) listGenerationsRequest(ctx context.Context, p ListParams) (*http.Request, error) {
	var q strings.Builder
	add := func(name, value string) {
		if q.Len() > 0 {
			q.WriteByte('&')
		}
		q.WriteString(name)
		q.WriteByte('=')
		q.WriteString(url.QueryEscape(value))
	}
	if p.Feature != "" {
		add("feature", string(p.Feature))
	}
	if p.Limit != 0 {
		add("limit", strconv.Itoa(p.Limit))
	}
	if p.Cursor != "" {
		add("cursor", p.Cursor)
	}
	return c.newRequest(ctx, http.MethodGet, "/v3/generations", "", q.String())
}

// createGenerationBody is api.CreateGenerationRequest with the arguments
// already encoded, so they are not encoded a second time.
type createGenerationBody struct {
	Args       json.RawMessage  `json:"args"`
	Feature    mediagen.Feature `json:"feature"`
	WebhookURL string           `json:"webhookUrl,omitempty"`
}

// createGenerationRequestBody encodes the body of a create: the arguments
// go out as encoded once, not encoded again from a map.
func createGenerationRequestBody(a *encodedArgs, webhookURL string) ([]byte, error) {
	body, err := json.Marshal(createGenerationBody{Feature: a.feature, Args: a.raw, WebhookURL: webhookURL})
	if err != nil {
		return nil, fmt.Errorf("%w: arguments: %v", ErrInvalidArgument, err)
	}
	return body, nil
}

// createGeneration sends POST /v3/generations with body, encoded.
func (c *Client) createGeneration(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := c.newRequest(ctx, http.MethodPost, "/v3/generations", "", "")
	if err != nil {
		return nil, err
	}
	return c.send(req, body)
}
