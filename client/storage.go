package client

import (
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
	"github.com/mediagen/mediagen-go/internal/retry"
)

// ErrExpired matches a [*StorageError] for a signed URL storage no longer
// honours: an output, poster or preview URL past its expiry. Read the
// generation (or voice, or template) again for fresh URLs; an API-created
// generation itself is gone 24 hours after its request ([ErrNotFound]). A
// signed upload URL that expired is refused the same way: reserve a new one.
var ErrExpired = errors.New("mediagen: signed URL expired")

// StorageError is an answer of the storage host other than success, to a
// download or a signed upload's PUT, after the retries that could be made.
// It matches [ErrNotFound] for 404 (the asset was removed) and [ErrExpired]
// for 403 (the signed URL expired or, for a PUT, a signed header differs).
type StorageError struct {
	Method     string // GET or PUT
	StatusCode int
	Message    string // the start of storage's answer
	// RetryAfter is what storage asked to wait before a retry, if it said;
	// a wait longer than the retry policy's WaitMax ends the retries.
	RetryAfter time.Duration
	// Retryable is true when the failure was transient (429, 500, 502, 503,
	// 504, or a broken connection) but the transfer could not be started
	// again: bytes had already gone to the writer, or the upload's body
	// cannot be rewound.
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

// maxStorageMessage caps [StorageError.Message].
const maxStorageMessage = 512

// newStorageError reads a failed storage answer.
func newStorageError(resp *http.Response, clock Clock) (*StorageError, outcome) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxStorageMessage))
	e := &StorageError{Method: resp.Request.Method, StatusCode: resp.StatusCode, Message: storageMessage(body)}
	o := outcome{err: e}
	if retry.TransientStatus(resp.StatusCode) {
		o.retry = true
		o.retryAfter, _ = retry.After(resp, clock.Now())
		e.RetryAfter = o.retryAfter
	}
	return e, o
}

// storageMessage returns the message of a storage error body: the service's
// JSON error message when there is one, else the text itself.
func storageMessage(body []byte) string {
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error.Message != "" {
		return eb.Error.Message
	}
	return strings.TrimSpace(string(body))
}

// PutUpload sends the bytes of a reserved signed upload: step 2 of the
// two-step upload ([CreateUploadURL] is step 1; package upload does every
// step). It sends exactly the signed Content-Type and Content-Length, and
// never the API key; body must hold exactly u.Headers.ContentLength bytes.
// Transient failures (a broken connection, 429, 500, 502, 503, 504) are
// retried under the retry policy when body is an [io.Seeker], from the
// position it had when PutUpload was called; otherwise they return a
// [*StorageError] with Retryable set. A refusal (403: the URL expired, or a
// header differs) returns a [*StorageError] matching [ErrExpired]: reserve
// a new URL. On success the file id u.File.ID is live.
func (c *Client) PutUpload(ctx context.Context, u *mediagen.UploadURL, body io.Reader, opts ...Option) error {
	if u == nil || body == nil {
		return fmt.Errorf("%w: PutUpload needs an upload URL and a body", ErrInvalidArgument)
	}
	if _, err := url.Parse(u.UploadURL); err != nil || u.Headers.ContentLength < 0 {
		return fmt.Errorf("%w: PutUpload: not a signed upload URL", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return err
	}
	seeker, rewindable := body.(io.Seeker)
	var from int64
	if rewindable {
		if from, err = seeker.Seek(0, io.SeekCurrent); err != nil {
			return fmt.Errorf("mediagen: storage PUT: %w", err)
		}
	}
	return transferRetrier(cfg, "storage PUT").run(ctx, func(n int) outcome {
		if n > 0 {
			if _, err := seeker.Seek(from, io.SeekStart); err != nil {
				return outcome{err: fmt.Errorf("mediagen: storage PUT: rewinding the body: %w", err)}
			}
		}
		o := put(ctx, cfg, u, body)
		if o.retry && !rewindable {
			var se *StorageError
			if errors.As(o.err, &se) {
				se.Retryable = true
			}
			o.retry = false
		}
		return o
	})
}

// put sends one attempt of a storage PUT. It returns only once the
// transport can no longer read body, so the body may be rewound for another
// attempt and is never read after PutUpload returns.
func put(ctx context.Context, cfg *config, u *mediagen.UploadURL, body io.Reader) outcome {
	method := string(u.Method)
	if method == "" {
		method = http.MethodPut
	}
	ab := &attemptBody{r: body}
	defer ab.Close()
	req, err := http.NewRequestWithContext(ctx, method, u.UploadURL, ab)
	if err != nil {
		return outcome{err: fmt.Errorf("%w: bad upload URL: %v", ErrInvalidArgument, redactError(err))}
	}
	// Exactly the signed headers: Content-Length comes from ContentLength
	// (net/http ignores it in Header), and nothing else is set, least of
	// all Authorization.
	req.ContentLength = u.Headers.ContentLength
	req.Header["Content-Type"] = []string{u.Headers.ContentType}
	resp, err := cfg.storage.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return outcome{err: ctx.Err()}
		}
		if rerr := ab.readErr(); rerr != nil {
			return outcome{err: rerr} // the body's own failure: not the network's
		}
		err = redactError(err)
		return outcome{err: fmt.Errorf("mediagen: storage PUT: %w", err), retry: retryableTransportError(err)}
	}
	defer resp.Body.Close()
	if dst := cfg.s.responseInto; dst != nil {
		*dst = resp
	}
	defer func() { _, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) }() // the connection is reused
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return outcome{}
	}
	_, o := newStorageError(resp, cfg.s.clock)
	return o
}

// redactError drops the URL of a *url.Error: a signed URL's query is its
// credential.
func redactError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// errBodyClosed is what a late read of an abandoned attempt's body sees.
var errBodyClosed = errors.New("mediagen: request body read after the attempt ended")

// attemptBody is the body of one PUT attempt. Closing it waits for a read
// in progress and makes later reads fail, so the transport never touches
// the caller's body once the next attempt rewinds it.
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
		return 0, errBodyClosed
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

func (b *attemptBody) readErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}
