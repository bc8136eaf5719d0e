package client

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/engine"
	"github.com/mediagen/mediagen-go/internal/retry"
)

// ErrExpired matches a [*StorageError] for a signed URL past its expiry:
// read the resource again for fresh URLs, or reserve a new upload.
var ErrExpired = errors.New("mediagen: signed URL expired")

// StorageError is a storage host's answer other than success to a download
// or a signed upload's PUT, after the retries that could be made. It
// matches [ErrNotFound] for 404 (the asset was removed) and [ErrExpired]
// for 403 (the URL expired or, for a PUT, a signed header differs).
type StorageError struct {
	Method     string // GET or PUT
	StatusCode int
	Message    string        // the start of storage's answer
	RetryAfter time.Duration // asked for by storage; one over WaitMax ends the retries
	// Retryable is true when the failure was transient but the transfer could
	// not start again: bytes had reached the writer, or the body cannot rewind.
	Retryable bool
}

// Error describes the refusal; it never includes the signed URL.
func (e *StorageError) Error() string {
	msg := fmt.Sprintf("mediagen: storage %s answered %d", e.Method, e.StatusCode)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.StatusCode == http.StatusForbidden {
		msg += " (signed URL refused)"
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (asked to retry after %s)", e.RetryAfter)
	}
	if e.Retryable {
		msg += " (transient, but the transfer could not be started again)"
	}
	return msg
}

// Is matches [ErrNotFound] and [ErrExpired].
func (e *StorageError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrExpired:
		return e.StatusCode == http.StatusForbidden
	}
	return false
}

// Transient reports whether the same transfer may succeed later: a 429,
// 500, 502, 503 or 504.
func (e *StorageError) Transient() bool { return retry.TransientStatus(e.StatusCode) }

// newStorageError reads a failed storage answer to a request of method (the
// caller's: a middleware's answer may carry no Request), received at now.
func newStorageError(resp *http.Response, method string, now time.Time) *StorageError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	e := &StorageError{Method: method, StatusCode: resp.StatusCode, Message: storageMessage(body)}
	if retry.TransientStatus(resp.StatusCode) {
		e.RetryAfter, _ = retry.After(resp, now)
	}
	return e
}

// storageMessage is the service's JSON error message in body, else body.
func storageMessage(body []byte) string {
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error.Message != "" {
		return eb.Error.Message
	}
	return strings.TrimSpace(string(body))
}

// PutUpload sends the u.Headers.ContentLength bytes of body to a signed
// upload reserved by [Client.CreateUploadURL], with the signed headers and
// never the API key; on success u.File.ID is live. Transient failures are
// retried when body is an [io.Seeker] that can seek (not a pipe), from its
// position at the call, else returned as a [*StorageError] with Retryable
// set. A 403 matches [ErrExpired]: reserve a new URL.
func (c *Client) PutUpload(ctx context.Context, u *mediagen.UploadURL, body io.Reader, opts ...Option) error {
	if u == nil || body == nil {
		return fmt.Errorf("%w: PutUpload needs an upload URL and a body", ErrInvalidArgument)
	}
	target, err := url.Parse(u.UploadURL)
	if err != nil || u.Headers.ContentLength < 0 {
		return fmt.Errorf("%w: PutUpload: not a signed upload URL", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return err
	}
	seeker, rewindable := body.(io.Seeker)
	var from int64
	if rewindable {
		from, err = seeker.Seek(0, io.SeekCurrent)
		rewindable = err == nil // a pipe (os.Stdin) cannot seek: sent once
	}
	method := cmp.Or(string(u.Method), http.MethodPut)
	r := &engine.Request{Method: method, URL: *target, Header: http.Header{"Content-Type": {u.Headers.ContentType}},
		Class: engine.Safe, Storage: true, Transfer: true}
	if !rewindable {
		r.Class = engine.Once
	}
	attempts := 0
	r.Open = func() (io.ReadCloser, int64, error) {
		if attempts++; attempts > 1 {
			if _, err := seeker.Seek(from, io.SeekStart); err != nil {
				return nil, 0, fmt.Errorf("mediagen: storage PUT: rewinding the body: %w", err)
			}
		}
		return &attemptBody{r: body}, u.Headers.ContentLength, nil
	}
	err = c.eng.Do(ctx, &cfg.call, r, func(resp *http.Response) error {
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return nil
		}
		return newStorageError(resp, method, cfg.call.Clock.Now())
	})
	var se *StorageError
	var send *engine.SendError
	switch { // once ctx ended, Do returns ctx.Err()
	case errors.As(err, &se):
		se.Retryable = se.Transient() && !rewindable
	case errors.As(err, &send):
		err = fmt.Errorf("mediagen: storage PUT: %w", err)
	}
	return err
}

// attemptBody is the body of one PUT attempt. Close waits for a read in
// progress and fails later ones, so the transport never reads the caller's
// body once the next attempt rewinds it.
type attemptBody struct {
	mu     sync.Mutex
	r      io.Reader
	closed bool
	err    error // the first read error of the body itself
}

func (b *attemptBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, errors.New("mediagen: request body read after the attempt ended")
	}
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.err = err
	}
	return n, err
}

func (b *attemptBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}

// Err returns the first failure of the body's own reads, which the engine
// reports instead of the network's.
func (b *attemptBody) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}
