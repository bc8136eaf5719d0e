package client

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mediagen/mediagen-go/internal/redact"
	"github.com/mediagen/mediagen-go/internal/retry"
)

// Sentinel errors for [errors.Is]; an [*APIError] matches the one of its status.
var (
	// ErrInvalidArgument: the client or the service (400, 413, 415) refused an argument; nothing was charged.
	ErrInvalidArgument = errors.New("mediagen: invalid argument")
	// ErrUnauthorized: 401, the API key is missing or invalid.
	ErrUnauthorized = errors.New("mediagen: unauthorized")
	// ErrInsufficientBalance: 402, the call costs more than the balance; an [*InsufficientBalanceError].
	ErrInsufficientBalance = errors.New("mediagen: insufficient balance")
	// ErrPermissionRequired: 403 permission_required, a likeness feature called without permissionConfirmed.
	ErrPermissionRequired = errors.New("mediagen: permission required")
	// ErrNotFound: 404, the generation, voice or preview does not exist, was deleted, or expired.
	ErrNotFound = errors.New("mediagen: not found")
	// ErrRateLimited: 429 outlasting the retries; [APIError.RetryAfter] says when to try again.
	ErrRateLimited = errors.New("mediagen: rate limited")
	// ErrNoAPIKey means [New] found no API key.
	ErrNoAPIKey = errors.New("mediagen: no API key: pass one to client.New or set MEDIAGEN_API_KEY")
	// ErrNoBaseURL means [New] found no base URL.
	ErrNoBaseURL = errors.New("mediagen: no base URL: use client.WithBaseURL or set MEDIAGEN_BASE_URL")
)

// maxErrorBody caps [APIError.Body] so a large error page cannot pin memory.
const maxErrorBody = 4 << 10

// APIError is an answer of the service other than success, safe to log: no headers, no query.
type APIError struct {
	StatusCode int           // HTTP status, e.g. 404
	Code       string        // machine-readable code, e.g. "not_found"; "" when the body had none
	Message    string        // human-readable description from the service
	RetryAfter time.Duration // the Retry-After header, when present
	Method     string        // method of the failed request
	Path       string        // path of the failed request, without query
	Body       []byte        // raw body, at most 4 KiB
}

// Error describes the failure, e.g.
// "mediagen: GET /v3/generations/g1: 404 not_found: no such generation".
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("mediagen: ")
	if e.Method != "" {
		b.WriteString(e.Method + " " + e.Path + ": ")
	}
	b.WriteString(strconv.Itoa(e.StatusCode))
	if t := cmp.Or(e.Code, http.StatusText(e.StatusCode)); t != "" {
		b.WriteString(" " + t)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	return b.String()
}

// Transient reports whether the same request may succeed later: a 429, 500, 502, 503 or 504.
// For a charging request a 5xx is ambiguous instead.
func (e *APIError) Transient() bool { return retry.TransientStatus(e.StatusCode) }

// sentinels maps a status to the sentinel its [*APIError] matches; a 403 only with permission_required.
var sentinels = map[int]error{
	http.StatusBadRequest: ErrInvalidArgument, http.StatusRequestEntityTooLarge: ErrInvalidArgument,
	http.StatusUnsupportedMediaType: ErrInvalidArgument, http.StatusUnauthorized: ErrUnauthorized,
	http.StatusPaymentRequired: ErrInsufficientBalance, http.StatusForbidden: ErrPermissionRequired,
	http.StatusNotFound: ErrNotFound, http.StatusTooManyRequests: ErrRateLimited,
}

// Is reports whether target is the sentinel of e's status.
func (e *APIError) Is(target error) bool {
	if e.StatusCode == http.StatusForbidden && e.Code != "permission_required" {
		return false
	}
	return target != nil && sentinels[e.StatusCode] == target
}

// InsufficientBalanceError is a 402: the call costs Required USD, over the Balance. Nothing was charged.
type InsufficientBalanceError struct {
	APIError
	Required float64 // cost of the refused call, USD
	Balance  float64 // balance at the time, USD
}

// Error describes the shortfall from Required and Balance, which the contract guarantees (its wording not).
func (e *InsufficientBalanceError) Error() string {
	a := e.APIError
	a.Message = fmt.Sprintf("this call costs %g USD; the balance is %g USD", e.Required, e.Balance)
	return a.Error()
}

// Unwrap returns the embedded [*APIError], so errors.As(err, &apiErr) works.
func (e *InsufficientBalanceError) Unwrap() error { return &e.APIError }

// errorBody is the service's error envelope; required and balance come with a 402.
type errorBody struct {
	Error struct {
		Code     string  `json:"code"`
		Message  string  `json:"message"`
		Required float64 `json:"required"`
		Balance  float64 `json:"balance"`
	} `json:"error"`
}

// newAPIError builds the error of a non-2xx answer, masking the key an echo of the request may carry.
func newAPIError(resp *http.Response, body []byte, secret string, now time.Time) error {
	body = redact.Bytes(body, secret)
	e := APIError{StatusCode: resp.StatusCode, Body: body[:min(len(body), maxErrorBody)]}
	if req := resp.Request; req != nil {
		e.Method, e.Path = req.Method, req.URL.Path
	}
	e.RetryAfter, _ = retry.After(resp, now) // 0 without one
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil {
		// Decoded text may hold what the body held escaped.
		e.Code, e.Message = redact.String(eb.Error.Code, secret), redact.String(eb.Error.Message, secret)
	}
	if e.Message == "" && e.Code == "" && len(body) > 0 && !json.Valid(body) {
		e.Message = strings.TrimSpace(string(e.Body[:min(len(e.Body), 200)]))
	}
	if resp.StatusCode == http.StatusPaymentRequired {
		return &InsufficientBalanceError{APIError: e, Required: eb.Error.Required, Balance: eb.Error.Balance}
	}
	return &e
}
